//! The fuzz targets' bodies, shared by the AFL++ binaries (`src/bin`) and the crate's tests.
//!
//! * [`packet`]: one frame into one of the fuzzed programs on any port; the first input byte
//!   picks the program, the next two the port (0..=511), the rest is the frame.
//! * [`load`]: the input as a BMv2 JSON document.
//!
//! A target fails by panicking: the engine must turn every input into a result or a typed
//! error, and after a frame has been drained every byte it took from the pool is back.

use std::path::Path;

use bufferlab_engine::engine::Engine;
use bufferlab_engine::tables::MatchValue;
use bufferlab_tm::TmConfig;

/// A MAC the fuzzed programs forward to port 2 (`l2_forward` where a program has it), so
/// that frames reach the traffic manager and egress, not only the parser.
pub const KNOWN_MAC: u128 = 0x0800_0000_0202;

/// Every `*.json` of `dir` loaded into an engine, in name order (the order the first input
/// byte indexes). Panics on a program that does not load: the corpus would be meaningless.
pub fn engines(dir: &Path) -> Vec<Engine> {
    let mut paths: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    paths.sort();
    assert!(!paths.is_empty(), "no BMv2 JSON in {}", dir.display());
    paths
        .iter()
        .map(|path| {
            let text =
                std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            let mut engine = Engine::new(&text, TmConfig::default(), 1)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            // Programs without such a table or action simply keep their defaults.
            let _ = engine.table_add(
                "l2_forward",
                vec![MatchValue::Exact(KNOWN_MAC)],
                "l2_to_port",
                vec![2],
                0,
            );
            engine
        })
        .collect()
}

/// Sends the frame the input describes and drains the switch (see the crate docs).
pub fn packet(engines: &mut [Engine], data: &[u8]) {
    let [choice, high, low, frame @ ..] = data else {
        return;
    };
    let engine = &mut engines[usize::from(*choice) % engines.len()];
    run_frame(engine, u16::from_be_bytes([*high, *low]) % 512, frame);
}

/// Loads the input as a BMv2 JSON document; what loads must also run a frame.
pub fn load(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(mut engine) = Engine::new(text, TmConfig::default(), 1) {
        run_frame(&mut engine, 1, &[0xff; 60]);
    }
}

/// One frame in, the switch drained; it was counted and the pool is empty again.
fn run_frame(engine: &mut Engine, port: u16, frame: &[u8]) {
    let before = engine.stats.received;
    let now = engine.now() + 1_000;
    engine
        .send(port, frame, now)
        .unwrap_or_else(|e| panic!("port {port} is valid, yet: {e}"));
    engine.drain();
    engine.discard_received();
    engine.take_packet_in();
    engine.take_digests();
    assert_eq!(
        engine.stats.received,
        before + 1,
        "the frame was not counted"
    );
    assert_eq!(
        engine.pool_used_bytes(),
        0,
        "a drained switch holds pool bytes"
    );
}
