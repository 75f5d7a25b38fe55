//! The packers against the interpreter's bit writer and reader: random
//! layouts, and the fixtures' headers and checksum inputs.

use super::test_fixtures::*;
use super::*;
use crate::bits::mask;
use crate::flat::random::{pick, FORWARD};
use crate::hash::Rng;
use crate::packet::Packet;

/// The packing and extraction functions of `plan`, compiled on their own.
fn packer(plan: &pack::Plan) -> (Packer, Unpacker) {
    let mut module = new_module().expect("host supported");
    let (mut ctx, mut fctx) = (module.make_context(), FunctionBuilderContext::new());
    let mut define = |direction| {
        let id = pack::define(&mut module, &mut ctx, &mut fctx, plan, direction, 0);
        module.clear_context(&mut ctx);
        id.expect("compiles")
    };
    let (pack_id, extract_id) = (
        define(pack::Direction::Pack),
        define(pack::Direction::Extract),
    );
    module.finalize_definitions().expect("finalizes");
    let memory = run::Memory::new(module);
    (
        Packer::new(&memory, pack_id, plan.fields(), plan.written()).expect("finalized"),
        Unpacker::new(&memory, extract_id, plan.fields(), plan.read()).expect("finalized"),
    )
}

#[test]
fn random_layouts_pack_and_extract_as_the_bit_writer_and_reader_do() {
    let mut rng = Rng::new(11);
    for round in 0..300 {
        // Fields of 1 to 64 bits back to back, in slots taken in any order,
        // padded to whole bytes.
        let n = 1 + pick(&mut rng, 14);
        let mut parts = vec![];
        let mut at = 0;
        for _ in 0..n {
            // Each field within the 8 bytes from its first byte (as headers'
            // fields are, nearly all): one load extracts it.
            let w = match pick(&mut rng, 4) {
                0 => 64,
                1 => 8 * (1 + pick(&mut rng, 8) as u32),
                _ => 1 + pick(&mut rng, 64) as u32,
            }
            .min(64 - at % 8);
            parts.push((pick(&mut rng, 40) as u32, at, w));
            at += w;
        }
        let pad = (8 - at % 8) % 8;
        if pad > 0 {
            parts.push((40, at, pad));
        }
        let plan = pack::Plan {
            parts: parts.clone(),
            bytes: (at + pad) / 8,
        };
        let (native, extract) = packer(&plan);
        // Slot values with bits above their fields' widths set too.
        let fields: Vec<u64> = (0..41).map(|_| rng.next_u64()).collect();
        let mut expected = vec![];
        let mut w = crate::bits::BitWriter::new(&mut expected);
        for &(f, _, width) in &parts {
            w.push(width, u128::from(fields[f as usize]) & mask(width));
        }
        w.finish();
        let mut out = vec![0xa5; plan.written() + 3];
        assert!(native.pack(&fields, &mut out));
        assert_eq!(
            &out[..expected.len()],
            &expected[..],
            "round {round}: {parts:?}"
        );
        assert!(out[expected.len()..plan.written()].iter().all(|&b| b == 0));
        assert_eq!(out[plan.written()..], [0xa5; 3], "nothing past the words");
        let slots = plan.fields();
        assert!(
            !native.pack(&fields[..slots - 1], &mut out),
            "a slot missing"
        );
        assert!(!native.pack(&fields, &mut out[..plan.written() - 1]));
        // Extraction reads back what was packed, each slot cut to its field.
        assert!(plan.extractable());
        let mut frame = expected.clone();
        frame.extend((0..8).map(|_| rng.next_u64() as u8));
        let mut slots = vec![u64::MAX; 41];
        assert!(!extract.extract(&frame[..plan.read() - 1], &mut slots));
        assert!(!extract.extract(&frame, &mut slots[..plan.fields() - 1]));
        assert_eq!(
            slots,
            vec![u64::MAX; 41],
            "a refused extraction writes nothing"
        );
        assert!(extract.extract(&frame, &mut slots));
        // A slot two fields share holds the later one.
        for (i, &(f, at, width)) in parts.iter().enumerate() {
            if parts[i + 1..].iter().any(|&(g, ..)| g == f) {
                continue;
            }
            let want = crate::bits::get_bits(&frame, at as usize, width) as u64;
            assert_eq!(
                slots[f as usize], want,
                "round {round}: field at {at}, {width} bits"
            );
        }
    }
}

#[test]
fn compiled_headers_and_checksum_inputs_pack_as_interpreted() {
    let mut rng = Rng::new(12);
    let mut seen = (0, 0);
    for json in [L3, TABLES, META, PARSER, WIDE, FORWARD, FEEDBACK] {
        let mut native = crate::load::load(json).expect("fixture loads");
        compile(&mut native);
        let mut interpreted = native.clone();
        strip(&mut interpreted);
        for _ in 0..50 {
            let mut pkt = Packet::new(&native);
            for f in 0..native.fields.len() as u32 {
                let v = u128::from(rng.next_u64()) << 64 | u128::from(rng.next_u64());
                pkt.phv
                    .set(&native, f, v & mask(native.fields[f as usize].width));
            }
            for v in pkt.phv.valid.iter_mut() {
                *v = pick(&mut rng, 5) != 0;
            }
            for h in 0..native.headers.len() {
                seen.0 += usize::from(native.headers[h].native_emit.is_some());
                let emit = |p: &Program| {
                    let mut out = vec![];
                    let mut w = crate::bits::BitWriter::new(&mut out);
                    crate::exec::emit_header_bits(p, &pkt, h as u32, &mut w);
                    w.finish();
                    out
                };
                assert_eq!(emit(&native), emit(&interpreted), "header {h}");
            }
            for (c, i) in native.calculations.iter().zip(&interpreted.calculations) {
                seen.1 += usize::from(c.packed.as_ref().is_some_and(|pk| pk.native.is_some()));
                let (mut a, mut b) = (vec![], vec![]);
                crate::exec::pack_inputs(&native, &pkt, c, &mut a);
                crate::exec::pack_inputs(&interpreted, &pkt, i, &mut b);
                assert_eq!(a, b, "calculation {}", c.name);
            }
        }
    }
    assert!(seen.0 > 0 && seen.1 > 0, "compiled: {seen:?}");
}
