//! AFL++ target: frames into the fuzzed programs (`$BUFFERLAB_FUZZ_PROGRAMS`, default
//! build/fuzz/programs, made by `make fuzz`), any port. Input layout: see `bufferlab_fuzz`.

use std::path::PathBuf;

fn main() {
    let dir = std::env::var_os("BUFFERLAB_FUZZ_PROGRAMS")
        .map_or_else(|| PathBuf::from("build/fuzz/programs"), PathBuf::from);
    // Loaded once, before the fork server starts: every input then costs one frame.
    // Asserted unwind-safe (the JIT's code memory is not RefUnwindSafe): a panic ends
    // the run as a crash AFL records, so no engine is used after one.
    let mut engines = std::panic::AssertUnwindSafe(bufferlab_fuzz::engines(&dir));
    afl::fuzz!(|data: &[u8]| {
        bufferlab_fuzz::packet(&mut engines, data);
    });
}
