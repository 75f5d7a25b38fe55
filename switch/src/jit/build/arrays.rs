//! Register arrays and counters in line. A cell is found through its
//! array's vector in the state (the words [`VecWords`] names hold the
//! cells' address and their number), and its index is checked against that
//! number as the interpreter checks it: out of range, a read leaves its
//! field as it was, a get gives 0, and a write or a count does nothing.

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, Block, InstBuilder, MemFlagsData, Value};

use super::{off, Tr};
use crate::bits::mask;
use crate::flat::Op;
use crate::jit::run::{Ctx, VecWords};
use crate::state::CounterCell;

/// Bytes of a machine word, the unit of [`VecWords`].
const WORD: usize = std::mem::size_of::<usize>();

impl Tr<'_, '_> {
    /// Translates a register array or counter op.
    pub(super) fn array_op(&mut self, op: Op) -> Result<(), String> {
        let Some((registers, counters)) = self.arrays else {
            return Err(format!("{op:?} left to the interpreter"));
        };
        match op {
            Op::RegisterGet { d, array } => {
                let i = self.get(d);
                let zero = self.k128(0);
                self.set(d, zero);
                let (cell, join) = self.register_cell(registers, array, i);
                let v = self.b.ins().load(types::I128, flags(), cell, 0);
                self.set(d, v);
                self.join(join);
            }
            Op::RegisterRead { f, array, a } => {
                let i = self.get(a);
                self.read_into(registers, f, array, i);
            }
            Op::RegisterReadF { f, array, index } => {
                let i = self.field(index);
                self.read_into(registers, f, array, i);
            }
            Op::RegisterWrite { array, a } => {
                let i = self.get(a);
                let mut v = self.get(a + 1);
                let width = self
                    .p
                    .registers
                    .get(array as usize)
                    .map_or(128, |r| r.width);
                if mask(width) != u128::MAX {
                    let m = self.k128(mask(width));
                    v = self.b.ins().band(v, m);
                }
                let (cell, join) = self.register_cell(registers, array, i);
                self.b.ins().store(flags(), v, cell, 0);
                self.join(join);
            }
            Op::Count { array, a } => {
                let i = self.get(a);
                let size = std::mem::size_of::<Vec<CounterCell>>();
                let (cell, join) = self.cell(
                    self.counters,
                    counters,
                    size * array as usize,
                    std::mem::size_of::<CounterCell>(),
                    i,
                );
                let bytes = self.b.ins().load(
                    types::I64,
                    flags(),
                    self.ctx,
                    off(std::mem::offset_of!(Ctx, ingress_len)),
                );
                let packets_at = off(std::mem::offset_of!(CounterCell, packets));
                let packets = self.b.ins().load(types::I64, flags(), cell, packets_at);
                let packets = self.b.ins().iadd_imm_s(packets, 1);
                self.b.ins().store(flags(), packets, cell, packets_at);
                let bytes_at = off(std::mem::offset_of!(CounterCell, bytes));
                let sum = self.b.ins().load(types::I64, flags(), cell, bytes_at);
                let sum = self.b.ins().iadd(sum, bytes);
                self.b.ins().store(flags(), sum, cell, bytes_at);
                self.join(join);
            }
            _ => return Err(format!("{op:?} is not a register or counter op")),
        }
        Ok(())
    }

    /// `f = register[i]` (cut to `f`'s width), nothing when `i` is out of range.
    fn read_into(&mut self, words: VecWords, f: u32, array: u32, i: Value) {
        let (cell, join) = self.register_cell(words, array, i);
        let v = self.b.ins().load(types::I64, flags(), cell, 0);
        self.store(f, v);
        self.join(join);
    }

    /// Cell `i` of register array `array`, as [`Self::cell`].
    fn register_cell(&mut self, words: VecWords, array: u32, i: Value) -> (Value, Block) {
        let at = std::mem::size_of::<Vec<u128>>() * array as usize;
        self.cell(self.registers, words, at, std::mem::size_of::<u128>(), i)
    }

    /// Branches on whether `i` (128 bits) is below the length of the vector
    /// at byte `at` of `vectors`; in the block where it is, the address of
    /// its cell of `size` bytes. The caller uses the cell and then calls
    /// [`Self::join`] with the block returned, where both paths meet.
    fn cell(
        &mut self,
        vectors: Value,
        words: VecWords,
        at: usize,
        size: usize,
        i: Value,
    ) -> (Value, Block) {
        let cells = self
            .b
            .ins()
            .load(self.ptr, flags(), vectors, off(at + WORD * words.ptr));
        let len = self
            .b
            .ins()
            .load(self.ptr, flags(), vectors, off(at + WORD * words.len));
        let len = self.b.ins().uextend(types::I128, len);
        let inside = self.b.ins().icmp(IntCC::UnsignedLessThan, i, len);
        let (hit, join) = (self.b.create_block(), self.b.create_block());
        self.b.ins().brif(inside, hit, &[], join, &[]);
        self.b.switch_to_block(hit);
        let i = self.b.ins().ireduce(self.ptr, i);
        let offset = self.b.ins().imul_imm_s(i, size as i64);
        (self.b.ins().iadd(cells, offset), join)
    }

    /// Ends a cell's block at `join`, where the code goes on.
    fn join(&mut self, join: Block) {
        self.b.ins().jump(join, &[]);
        self.b.switch_to_block(join);
    }
}

/// Loads and stores of the state's own memory: aligned, and never trapping.
fn flags() -> MemFlagsData {
    MemFlagsData::trusted()
}
