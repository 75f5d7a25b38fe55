//! AFL++ target: frames into the fuzzed programs (`$BUFFERLAB_FUZZ_PROGRAMS`, default
//! build/fuzz/programs, made by `make fuzz`), any port. Input layout: see `bufferlab_fuzz`.

use std::path::PathBuf;

fn main() {
    let dir = std::env::var_os("BUFFERLAB_FUZZ_PROGRAMS")
        .map_or_else(|| PathBuf::from("build/fuzz/programs"), PathBuf::from);
    // Loaded once, before the fork server starts: every input then costs one frame.
    let mut engines = bufferlab_fuzz::engines(&dir);
    afl::fuzz!(|data: &[u8]| {
        bufferlab_fuzz::packet(&mut engines, data);
    });
}
