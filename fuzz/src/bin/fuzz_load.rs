//! AFL++ target: the input as a BMv2 JSON document (see `bufferlab_fuzz::load`).

fn main() {
    afl::fuzz!(|data: &[u8]| {
        bufferlab_fuzz::load(data);
    });
}
