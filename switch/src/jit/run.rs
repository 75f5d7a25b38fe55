//! Entering native code: the context it reads, the call, the ops it leaves
//! to the interpreter between calls, and the lifetime of its memory. All of
//! the JIT's `unsafe` is here, at the boundary between Rust and the code
//! Cranelift emitted.

use std::sync::{Arc, OnceLock};

use cranelift_jit::JITModule;
use cranelift_module::FuncId;

use super::build::Limits;
use crate::exec::State;
use crate::flat::{run_from, step, Code, Next, REGS};
use crate::hash::Rng;
use crate::packet::Packet;
use crate::program::Program;
use crate::state::CounterCell;
use crate::tables::TableState;

/// Status: the code reached its end.
pub(super) const END: u64 = 0;
/// Status: the code executed `exit`.
pub(super) const EXIT: u64 = 1;
/// Status: the start op is not one the code can start at.
pub(super) const NO_RESUME: u64 = 2;
/// Status `LEFT + pc`: the op at `pc` is left to the interpreter.
pub(super) const LEFT: u64 = 3;

/// What compiled code reads and writes, laid out for it (offsets taken with
/// `offset_of!`). The pointers are set from the packet, the state and the
/// action data right before each call.
#[repr(C)]
pub(super) struct Ctx {
    /// The register file, where an op left to the interpreter finds and
    /// leaves its registers: one of [`State`]'s pool, so a call need not
    /// zero a fresh one (that was 6 % of the simulator's instructions).
    pub(super) regs: *mut [u128; REGS],
    /// Always 0: what an action parameter past the call's data reads.
    pub(super) zero: u128,
    /// `pkt.phv.fields`.
    pub(super) fields: *mut u64,
    /// `pkt.phv.valid`.
    pub(super) valid: *const bool,
    /// The action data.
    pub(super) data: *const u128,
    /// Its length in values.
    pub(super) data_len: usize,
    /// `st.tables`.
    pub(super) tables: *mut TableState,
    /// `st.registers`: each array's cells found through [`VecWords`].
    pub(super) registers: *mut Vec<u128>,
    /// `st.counters`, likewise.
    pub(super) counters: *mut Vec<CounterCell>,
    /// `pkt.ingress_len`: the bytes a counter adds.
    pub(super) ingress_len: u64,
    /// `st.rng`, which [`random`] draws from.
    pub(super) rng: *mut Rng,
}

/// Which 8-byte words of a `Vec` hold its buffer's address and its length.
/// Rust does not promise `Vec`'s field order, so native code reading a
/// register or counter array's cells in place learns it from [`vec_words`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct VecWords {
    /// The word holding the buffer's address.
    pub ptr: usize,
    /// The word holding the length.
    pub len: usize,
}

/// Where register arrays' and counter arrays' vectors keep their address
/// and length; None (their ops stay interpreted) if looking at vectors of
/// known address and length did not tell.
pub(super) fn array_words() -> Option<(VecWords, VecWords)> {
    static WORDS: OnceLock<Option<(VecWords, VecWords)>> = OnceLock::new();
    *WORDS.get_or_init(|| Some((vec_words::<u128>()?, vec_words::<CounterCell>()?)))
}

/// The words of `Vec<T>` holding address and length, found in two vectors
/// whose address, length and (different) capacity are known; None unless
/// a `Vec<T>` is three words and both agree on one answer.
fn vec_words<T: Default + Clone>() -> Option<VecWords> {
    if std::mem::size_of::<Vec<T>>() != std::mem::size_of::<[usize; 3]>() {
        return None;
    }
    let look = |len: usize, capacity: usize| -> Option<VecWords> {
        let mut v: Vec<T> = Vec::with_capacity(capacity);
        v.resize(len, T::default());
        if v.capacity() == len {
            return None;
        }
        // SAFETY: `Vec<T>` is exactly three words (checked above), all of
        // them initialised integers or pointers; this copies its bytes.
        let words: [usize; 3] = unsafe { std::mem::transmute_copy(&v) };
        let at = |x: usize| {
            let mut found = (0..3).filter(|&i| words[i] == x);
            match (found.next(), found.next()) {
                (Some(i), None) => Some(i),
                _ => None,
            }
        };
        Some(VecWords {
            ptr: at(v.as_ptr() as usize)?,
            len: at(len)?,
        })
    };
    let first = look(3, 7)?;
    (look(5, 11)? == first).then_some(first)
}

/// Signature of a compiled block: context and start op; a status.
type Entry = unsafe extern "C" fn(*mut Ctx, u32) -> u64;

/// The machine code of one program, freed when the last block using it goes.
pub(super) struct Memory(Option<JITModule>);

// SAFETY: after `finalize_definitions` the module is never used again but to
// free its memory on drop; its code is immutable and may run on any thread
// (it touches only what the context it is given points to).
unsafe impl Send for Memory {}
// SAFETY: as above; no method of the module is called through a shared reference.
unsafe impl Sync for Memory {}

impl Memory {
    /// Holds `module`, whose definitions are finalized.
    pub(super) fn new(module: JITModule) -> Arc<Memory> {
        Arc::new(Memory(Some(module)))
    }
}

impl Drop for Memory {
    fn drop(&mut self) {
        if let Some(module) = self.0.take() {
            // SAFETY: every entry into this memory is a `Native` holding an
            // `Arc` of it, so none exists any more and no code of it is running.
            unsafe { module.free_memory() };
        }
    }
}

/// One block compiled to machine code.
#[derive(Clone)]
pub struct Native {
    entry: Entry,
    limits: Limits,
    // Keeps the code mapped while this entry exists.
    _memory: Arc<Memory>,
}

impl std::fmt::Debug for Native {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Native")
            .field("entry", &(self.entry as *const u8))
            .field("limits", &self.limits)
            .finish()
    }
}

impl Native {
    /// The finalized function `id` of `memory`'s module, built by
    /// [`super::build::translate`] for code needing `limits`.
    pub(super) fn new(memory: &Arc<Memory>, id: FuncId, limits: Limits) -> Option<Native> {
        let module = memory.0.as_ref()?;
        let at = module.get_finalized_function(id);
        // SAFETY: `at` is the start of a finalized (executable) function
        // whose signature `super::compile` declared as (pointer, i32) -> i64
        // in the host's default calling convention, which is `extern "C"`;
        // the `Arc` kept beside it keeps its memory mapped.
        let entry = unsafe { std::mem::transmute::<*const u8, Entry>(at) };
        Some(Native {
            entry,
            limits,
            _memory: Arc::clone(memory),
        })
    }

    /// Whether the packet and state have the slots this code reads and writes.
    fn fits(&self, st: &State, pkt: &Packet) -> bool {
        pkt.phv.fields.len() >= self.limits.fields
            && pkt.phv.valid.len() >= self.limits.headers
            && st.tables.len() >= self.limits.tables
            && st.registers.len() >= self.limits.registers
            && st.counters.len() >= self.limits.counters
    }
}

/// Runs `code` from op `pc` as native code, the ops it leaves to the
/// interpreter run in between; false (nothing run) when `code` has none.
pub(crate) fn run(
    p: &Program,
    st: &mut State,
    pkt: &mut Packet,
    code: &Code,
    data: &[u128],
    pc: usize,
) -> bool {
    let Some(native) = &code.native else {
        return false;
    };
    if !native.fits(st, pkt) {
        // Only a packet of another program's shape gets here.
        interpret(p, st, pkt, code, data, [0; REGS], pc);
        return true;
    }
    let Ok(start) = u32::try_from(pc) else {
        return true;
    };
    // Calls nest (a control's table runs an action), so each that spills
    // takes its own file from the pool. What an earlier call left in it is
    // never read: native code spills the registers an interpreted op reads
    // right before it, and reloads only those after.
    let mut file = native
        .limits
        .spills
        .then(|| st.register_files.pop().unwrap_or_default());
    let mut ctx = Ctx {
        regs: std::ptr::null_mut(),
        zero: 0,
        fields: std::ptr::null_mut(),
        valid: std::ptr::null(),
        data: data.as_ptr(),
        data_len: data.len(),
        tables: std::ptr::null_mut(),
        registers: std::ptr::null_mut(),
        counters: std::ptr::null_mut(),
        ingress_len: 0,
        rng: std::ptr::null_mut(),
    };
    let status = enter(native, &mut ctx, st, pkt, file.as_deref_mut(), start);
    if status == EXIT {
        pkt.flags.exit = true;
    } else if status != END {
        // Kept out of line: most calls (most actions) end in native code, and
        // the interpreter's loop inlined here would make every call pay for
        // setting it up.
        let mut zeros = [0; REGS];
        let regs = file.as_deref_mut().unwrap_or(&mut zeros);
        finish(p, st, pkt, code, native, data, &mut ctx, regs, status, pc);
    }
    if let Some(file) = file {
        st.register_files.push(file);
    }
    true
}

/// Calls `native` from op `start` with `ctx` pointing at the packet and
/// state now (they may have moved since the last call); its status.
#[inline(always)]
fn enter(
    native: &Native,
    ctx: &mut Ctx,
    st: &mut State,
    pkt: &mut Packet,
    regs: Option<&mut [u128; REGS]>,
    start: u32,
) -> u64 {
    ctx.regs = regs.map_or(std::ptr::null_mut(), |r| r);
    ctx.fields = pkt.phv.fields.as_mut_ptr();
    ctx.valid = pkt.phv.valid.as_ptr();
    ctx.tables = st.tables.as_mut_ptr();
    ctx.registers = st.registers.as_mut_ptr();
    ctx.counters = st.counters.as_mut_ptr();
    ctx.ingress_len = u64::from(pkt.ingress_len);
    ctx.rng = &mut st.rng;
    // SAFETY: `entry` was compiled from the code whose `native` it is after
    // `build::check` found every field, header, table, register array and
    // counter array it names below `limits`; `fits` found the packet's
    // fields and validity and the state's tables and arrays at least that
    // long (before the first call, and after each op run in between), and
    // the pointers were taken from them now, with no Rust code using them
    // until the call returns. The code reads action data only below
    // `data_len`, a cell of an array only below the length its vector holds
    // (at the word `array_words` found), and registers (only if
    // `limits.spills`, when `regs` is given) below `REGS` of the file `regs`
    // borrows; the context outlives the call.
    unsafe { (native.entry)(ctx, start) }
}

/// What follows a call from op `at` that did not reach the end: `exit`, the
/// interpreter (the op is no resume point), or the op it left to the
/// interpreter and the calls after it.
#[allow(clippy::too_many_arguments)]
#[inline(never)]
fn finish(
    p: &Program,
    st: &mut State,
    pkt: &mut Packet,
    code: &Code,
    native: &Native,
    data: &[u128],
    ctx: &mut Ctx,
    regs: &mut [u128; REGS],
    mut status: u64,
    mut at: usize,
) {
    loop {
        at = match status {
            END => return,
            EXIT => {
                pkt.flags.exit = true;
                return;
            }
            NO_RESUME => {
                interpret(p, st, pkt, code, data, *regs, at);
                return;
            }
            s => {
                let left = usize::try_from(s - LEFT).unwrap_or(usize::MAX);
                match step(p, st, pkt, code, data, regs, left) {
                    Next::At(next) if next < code.ops.len() => next,
                    Next::At(_) | Next::Stop => return,
                    Next::NotLeft => {
                        interpret(p, st, pkt, code, data, *regs, left);
                        return;
                    }
                }
            }
        };
        if !native.fits(st, pkt) {
            interpret(p, st, pkt, code, data, *regs, at);
            return;
        }
        let Ok(start) = u32::try_from(at) else {
            return;
        };
        status = enter(native, ctx, st, pkt, Some(regs), start);
    }
}

/// Runs `code` from `pc` in the interpreter, on register file `regs`: the
/// rare way on when native code cannot go on.
#[cold]
#[inline(never)]
fn interpret(
    p: &Program,
    st: &mut State,
    pkt: &mut Packet,
    code: &Code,
    data: &[u128],
    regs: [u128; REGS],
    pc: usize,
) {
    run_from(p, st, pkt, code, data, regs, pc);
}

/// Name under which compiled code imports [`packed_handle`].
pub(super) const PACKED_HANDLE: &str = "bufferlab_packed_handle";

/// The handle of the entry of `table` whose key packs to `key`, or
/// `u32::MAX`: how native code looks up an exact table hashed on a key of
/// at most 64 bits (`build::tables`).
///
/// # Safety
///
/// `table` points at a live [`TableState`] that nothing changes during the call.
pub(super) unsafe extern "C" fn packed_handle(table: *const TableState, key: u64) -> u32 {
    // SAFETY: the caller's promise; native code passes the address of one of
    // `st.tables` below the length `fits` checked, with Rust not running
    // until the call returns.
    let table = unsafe { &*table };
    table.lookup_packed(key).unwrap_or(u32::MAX)
}

/// Name under which compiled code imports [`count_hit`].
pub(super) const COUNT_HIT: &str = "bufferlab_count_hit";

/// Counts a packet of `bytes` bytes on the direct counter of `table`'s entry
/// `handle` (nothing when there is no such entry): how native code applying
/// a table with direct counters in place counts a hit (`build::tables`).
///
/// # Safety
///
/// `table` points at a live [`TableState`] that nothing else uses during the call.
pub(super) unsafe extern "C" fn count_hit(table: *mut TableState, handle: u32, bytes: u64) {
    // SAFETY: the caller's promise; native code passes the address of one of
    // `st.tables` (taken from the `&mut State` the call borrows) below the
    // length `fits` checked, with Rust not running until the call returns.
    let table = unsafe { &mut *table };
    if let Some(entry) = table.entry_mut(handle) {
        entry.counter.count(bytes);
    }
}

/// Name under which compiled code imports [`random`].
pub(super) const RANDOM: &str = "bufferlab_random";

/// A uniform value in `[lo, hi]` (each given as its low and high 64 bits,
/// `lo <= hi`) drawn from `rng` as the `random` primitive draws it; its low
/// 64 bits, all a field native code stores has: how native code runs
/// `Op::Random` (`build`).
///
/// # Safety
///
/// `rng` points at the live generator of the state the call borrows, which
/// nothing else uses during the call.
pub(super) unsafe extern "C" fn random(
    rng: *mut Rng,
    lo_low: u64,
    lo_high: u64,
    hi_low: u64,
    hi_high: u64,
) -> u64 {
    // SAFETY: the caller's promise; native code passes `ctx.rng`, taken
    // from the `&mut State` its call borrows, with Rust not running until
    // the call returns.
    let rng = unsafe { &mut *rng };
    let join = |low: u64, high: u64| u128::from(high) << 64 | u128::from(low);
    rng.range(join(lo_low, lo_high), join(hi_low, hi_high)) as u64
}

/// Signature of a packing function: field slots, output bytes.
type PackEntry = unsafe extern "C" fn(*const u64, *mut u8);

/// Fields packed into bytes by machine code ([`super::pack`]): a header's
/// wire form, or a calculation's inputs.
#[derive(Clone)]
pub struct Packer {
    entry: PackEntry,
    // Field slots read: every slot named is below this.
    fields: usize,
    // Bytes written: the output rounded up to whole 8-byte words.
    written: usize,
    // Keeps the code mapped while this entry exists.
    _memory: Arc<Memory>,
}

impl std::fmt::Debug for Packer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Packer")
            .field("entry", &(self.entry as *const u8))
            .field("fields", &self.fields)
            .field("written", &self.written)
            .finish()
    }
}

impl Packer {
    /// The finalized packing function `id` of `memory`'s module, built by
    /// [`super::pack::define`] for a plan reading slots below `fields` and
    /// writing `written` bytes.
    pub(super) fn new(
        memory: &Arc<Memory>,
        id: FuncId,
        fields: usize,
        written: usize,
    ) -> Option<Packer> {
        let module = memory.0.as_ref()?;
        let at = module.get_finalized_function(id);
        // SAFETY: `at` is the start of a finalized function declared by
        // `super::pack::define` as (pointer, pointer) -> () in the host's
        // default calling convention, which is `extern "C"`; the `Arc` kept
        // beside it keeps its memory mapped.
        let entry = unsafe { std::mem::transmute::<*const u8, PackEntry>(at) };
        Some(Packer {
            entry,
            fields,
            written,
            _memory: Arc::clone(memory),
        })
    }

    /// Writes the packed bytes to the start of `out`, and zeros up to the
    /// next 8-byte boundary; false (nothing written) when `fields` lacks a
    /// slot the plan reads or `out` is shorter than what it writes.
    #[inline]
    pub(crate) fn pack(&self, fields: &[u64], out: &mut [u8]) -> bool {
        if fields.len() < self.fields || out.len() < self.written {
            return false;
        }
        // SAFETY: the function reads only field slots below `self.fields`
        // and writes only the first `self.written` bytes of its output, both
        // checked just now against the slices the pointers come from, which
        // are borrowed for the whole call.
        unsafe { (self.entry)(fields.as_ptr(), out.as_mut_ptr()) };
        true
    }
}

/// Signature of an extraction function: input bytes, field slots.
type ExtractEntry = unsafe extern "C" fn(*const u8, *mut u64);

/// A header's fields extracted from bytes by machine code ([`super::pack`]).
#[derive(Clone)]
pub struct Unpacker {
    entry: ExtractEntry,
    // Field slots written: every slot named is below this.
    fields: usize,
    // Bytes read from the header's start.
    read: usize,
    // Keeps the code mapped while this entry exists.
    _memory: Arc<Memory>,
}

impl std::fmt::Debug for Unpacker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Unpacker")
            .field("entry", &(self.entry as *const u8))
            .field("fields", &self.fields)
            .field("read", &self.read)
            .finish()
    }
}

impl Unpacker {
    /// The finalized extraction function `id` of `memory`'s module, built by
    /// [`super::pack::define`] for a plan writing slots below `fields` and
    /// reading `read` bytes.
    pub(super) fn new(
        memory: &Arc<Memory>,
        id: FuncId,
        fields: usize,
        read: usize,
    ) -> Option<Unpacker> {
        let module = memory.0.as_ref()?;
        let at = module.get_finalized_function(id);
        // SAFETY: as for `Packer::new`: a finalized (pointer, pointer) -> ()
        // function, its memory kept mapped by the `Arc`.
        let entry = unsafe { std::mem::transmute::<*const u8, ExtractEntry>(at) };
        Some(Unpacker {
            entry,
            fields,
            read,
            _memory: Arc::clone(memory),
        })
    }

    /// Extracts the header whose wire form starts `input` into its slots of
    /// `fields`; false (nothing written) when `input` is shorter than what
    /// the function reads (the last fields' 8-byte windows may reach past the
    /// header) or `fields` lacks a slot it writes.
    #[inline]
    pub(crate) fn extract(&self, input: &[u8], fields: &mut [u64]) -> bool {
        if input.len() < self.read || fields.len() < self.fields {
            return false;
        }
        // SAFETY: the function reads only the first `self.read` bytes of its
        // input and writes only field slots below `self.fields`, both
        // checked just now against the slices the pointers come from, which
        // are borrowed for the whole call.
        unsafe { (self.entry)(input.as_ptr(), fields.as_mut_ptr()) };
        true
    }
}

/// Status of the compiled parser: parsing ended (accept, or no transition matched).
pub(super) const PARSED: u64 = 0;
/// Status: TNA's `$reject` state was reached.
pub(super) const REJECTED: u64 = 1;
/// Status `RESUME + s`: the interpreter goes on at state `s`, none of which is done.
pub(super) const RESUME: u64 = 2;

/// What the compiled parser reads and writes (offsets taken with `offset_of!`).
#[repr(C)]
pub(super) struct ParseCtx {
    /// `pkt.phv.fields`.
    pub(super) fields: *mut u64,
    /// `pkt.phv.valid`.
    pub(super) valid: *mut bool,
    /// `pkt.data`.
    pub(super) data: *const u8,
    /// Its length in bytes.
    pub(super) len: usize,
    /// `pkt.cursor`, in and out.
    pub(super) cursor: usize,
    /// States visited, in and out.
    pub(super) steps: u32,
}

/// Signature of a compiled parser: context and start state; a status.
type ParseEntry = unsafe extern "C" fn(*mut ParseCtx, u32) -> u64;

/// Where the compiled parser stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ParseEnd {
    /// At accept (or no transition matched).
    Accepted,
    /// At TNA's `$reject`.
    Rejected,
    /// At a state the interpreter goes on from, after `steps` states.
    Resume { state: u32, steps: u32 },
}

/// A program's parser compiled to machine code (see [`super::parse`]).
#[derive(Clone)]
pub struct NativeParser {
    entry: ParseEntry,
    // Field slots and validity bits it writes: every one named is below these.
    fields: usize,
    headers: usize,
    // Keeps the code mapped while this entry exists.
    _memory: Arc<Memory>,
}

impl std::fmt::Debug for NativeParser {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NativeParser")
            .field("entry", &(self.entry as *const u8))
            .field("fields", &self.fields)
            .field("headers", &self.headers)
            .finish()
    }
}

impl NativeParser {
    /// The finalized function `id` of `memory`'s module, built by
    /// [`super::parse::translate`] for states naming field slots below
    /// `fields` and headers below `headers`.
    pub(super) fn new(
        memory: &Arc<Memory>,
        id: FuncId,
        fields: usize,
        headers: usize,
    ) -> Option<NativeParser> {
        let module = memory.0.as_ref()?;
        let at = module.get_finalized_function(id);
        // SAFETY: a finalized (pointer, i32) -> i64 function in the host's
        // default calling convention (`extern "C"`), its memory kept mapped
        // by the `Arc`.
        let entry = unsafe { std::mem::transmute::<*const u8, ParseEntry>(at) };
        Some(NativeParser {
            entry,
            fields,
            headers,
            _memory: Arc::clone(memory),
        })
    }

    /// Parses `pkt` from state `start` at its cursor as far as compiled
    /// states go, moving the cursor; None (nothing done) when the packet
    /// lacks a slot the code writes.
    #[inline]
    pub(crate) fn parse(&self, pkt: &mut Packet, start: u32) -> Option<ParseEnd> {
        if pkt.phv.fields.len() < self.fields || pkt.phv.valid.len() < self.headers {
            return None;
        }
        let mut ctx = ParseCtx {
            fields: pkt.phv.fields.as_mut_ptr(),
            valid: pkt.phv.valid.as_mut_ptr(),
            data: pkt.data.as_ptr(),
            len: pkt.data.len(),
            cursor: pkt.cursor,
            steps: 0,
        };
        // SAFETY: the function writes field slots below `self.fields` and
        // validity bits below `self.headers` (checked just now against the
        // vectors the pointers come from), and reads the frame only below
        // `len` (each state checks its reads against it first); nothing else
        // uses the packet until it returns, and the context outlives the call.
        let status = unsafe { (self.entry)(&mut ctx, start) };
        pkt.cursor = ctx.cursor;
        Some(match status {
            PARSED => ParseEnd::Accepted,
            REJECTED => ParseEnd::Rejected,
            s => ParseEnd::Resume {
                state: u32::try_from(s - RESUME).unwrap_or(u32::MAX),
                steps: ctx.steps,
            },
        })
    }
}

/// Signature of a compiled deparser: field slots, validity bits and output;
/// the bytes emitted.
type DeparseEntry = unsafe extern "C" fn(*const u64, *const bool, *mut u8) -> u64;

/// A program's deparser emission compiled to machine code (see [`super::deparse`]).
#[derive(Clone)]
pub struct NativeDeparser {
    entry: DeparseEntry,
    // Field slots and validity bits it reads: every one named is below these.
    fields: usize,
    headers: usize,
    // Bytes of output it may write: every header at once and a word.
    capacity: usize,
    // Keeps the code mapped while this entry exists.
    _memory: Arc<Memory>,
}

impl std::fmt::Debug for NativeDeparser {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NativeDeparser")
            .field("entry", &(self.entry as *const u8))
            .field("fields", &self.fields)
            .field("headers", &self.headers)
            .field("capacity", &self.capacity)
            .finish()
    }
}

impl NativeDeparser {
    /// The finalized function `id` of `memory`'s module, built by
    /// [`super::deparse::translate`] for headers below `headers` whose
    /// fields are below `fields`, writing at most `capacity` bytes.
    pub(super) fn new(
        memory: &Arc<Memory>,
        id: FuncId,
        fields: usize,
        headers: usize,
        capacity: usize,
    ) -> Option<NativeDeparser> {
        let module = memory.0.as_ref()?;
        let at = module.get_finalized_function(id);
        // SAFETY: a finalized (pointer, pointer, pointer) -> i64 function in
        // the host's default calling convention (`extern "C"`), its memory
        // kept mapped by the `Arc`.
        let entry = unsafe { std::mem::transmute::<*const u8, DeparseEntry>(at) };
        Some(NativeDeparser {
            entry,
            fields,
            headers,
            capacity,
            _memory: Arc::clone(memory),
        })
    }

    /// Replaces `out`'s bytes with the valid headers of the deparse order;
    /// false, for the interpreter to emit them, when a valid header has no
    /// machine code (`out` is emptied then) or the packet lacks a slot or
    /// validity bit the code reads (`out` untouched).
    #[inline]
    pub(crate) fn emit(&self, fields: &[u64], valid: &[bool], out: &mut Vec<u8>) -> bool {
        if fields.len() < self.fields || valid.len() < self.headers {
            return false;
        }
        out.clear();
        out.reserve(self.capacity);
        // SAFETY: the function reads field slots below `self.fields` and
        // validity bits below `self.headers` (checked just now against the
        // slices the pointers come from) and writes only the first
        // `self.capacity` bytes of the output, which `out` has reserved.
        let n = unsafe { (self.entry)(fields.as_ptr(), valid.as_ptr(), out.as_mut_ptr()) };
        if n == super::deparse::INTERPRET {
            return false;
        }
        let n = (n as usize).min(self.capacity);
        // SAFETY: the emitted headers lie back to back from the buffer's
        // start and every word of each was stored, so the first `n` bytes
        // are initialised; `n` is within the reserved capacity.
        unsafe { out.set_len(n) };
        true
    }
}
