//! The compiled parser against the interpreter: random parse graphs over
//! parser.json's headers (loops, unions, states left to the interpreter,
//! TNA's reject) and random frames cut anywhere, every field, validity bit,
//! cursor, error and statistic compared.

use super::test_fixtures::PARSER;
use super::*;
use crate::exec::{parse, State};
use crate::flat::random::pick;
use crate::hash::Rng;
use crate::packet::Packet;
use crate::program::{
    Expr, ExtractTarget, KeyComponent, LValue, ParseState, ParserOp, Transition, TransitionMatch,
};

/// parser.json's headers of fixed size outside stacks' bookkeeping (Ethernet,
/// tags, union members, a length, a checksum, `rep`).
fn headers(p: &Program) -> Vec<u32> {
    let ok = |h: &&crate::program::HeaderInfo| !h.metadata && h.varbit.is_none();
    let named = p.headers.iter().filter(ok).map(|h| h.name.as_str());
    named.map(|n| p.header_by_name[n]).collect()
}

/// A narrow field of one of `hs` (or of the metadata `scalars`).
fn field(p: &Program, hs: &[u32], rng: &mut Rng) -> u32 {
    let h = match (pick(rng, 5), hs.is_empty()) {
        (0, _) | (_, true) => p.header_by_name["scalars"],
        _ => hs[pick(rng, hs.len())],
    };
    let hi = &p.headers[h as usize];
    hi.first_field + pick(rng, hi.num_fields as usize) as u32
}

/// A value a key component of `width` bits is likely to meet in [`frame`]'s
/// bytes (0, 1, 2, 0x81, 0xff repeated) or not.
fn likely(width: u32, rng: &mut Rng) -> u128 {
    let byte = [0u128, 1, 2, 0x81, 0xff][pick(rng, 5)];
    let v = match pick(rng, 3) {
        0 => byte,
        1 => (0..16).fold(0, |v, _| v << 8 | byte),
        _ => rng.next_u64() as u128,
    };
    v & crate::bits::mask(width)
}

/// One random state of a graph of `n` states.
fn state(p: &Program, hs: &[u32], n: usize, rng: &mut Rng) -> ParseState {
    let mut s = ParseState {
        name: "s".into(),
        ops: vec![],
        key: vec![],
        transitions: vec![],
        key_lookahead: 0,
        reject: pick(rng, 12) == 0,
    };
    if s.reject {
        return s;
    }
    // Keys and copies mostly read a header the state extracts, as parsers' do.
    let mut own = vec![];
    for _ in 0..pick(rng, 4) {
        let read = |rng: &mut Rng, own: &[u32]| match pick(rng, 3) {
            0 => field(p, hs, rng),
            _ => field(p, own, rng),
        };
        s.ops.push(match pick(rng, 10) {
            0..=4 => {
                let h = hs[pick(rng, hs.len())];
                own.push(h);
                ParserOp::Extract(ExtractTarget::Header(h))
            }
            5 => ParserOp::Advance(Expr::Const(8 * pick(rng, 4) as u128)),
            6 => ParserOp::Set(
                LValue::Field(field(p, hs, rng)),
                Expr::Const(likely(64, rng)),
            ),
            7 => ParserOp::Set(
                LValue::Field(field(p, hs, rng)),
                Expr::Field(read(rng, &own)),
            ),
            // Left to the interpreter: an advance by bits, a verify.
            8 => ParserOp::Advance(Expr::Const(4)),
            _ => ParserOp::Verify(Expr::Field(read(rng, &own)), Expr::Const(7)),
        });
    }
    for _ in 0..pick(rng, 3) {
        let f = match pick(rng, 3) {
            0 => field(p, hs, rng),
            _ => field(p, &own, rng),
        };
        let width = p.fields[f as usize].width.min(1 + pick(rng, 48) as u32);
        s.key.push(KeyComponent {
            expr: Expr::Field(f),
            width,
        });
    }
    let next = |rng: &mut Rng| match pick(rng, 4) {
        0 => None,
        _ => Some(pick(rng, n) as u32),
    };
    for _ in 0..pick(rng, 4) {
        let vm = s
            .key
            .iter()
            .map(|k| {
                let m = match pick(rng, 3) {
                    0 => likely(k.width, rng),
                    _ => u128::MAX,
                };
                (likely(k.width, rng) & m, m)
            })
            .collect();
        s.transitions.push(Transition {
            on: TransitionMatch::Value(vm),
            next: next(rng),
        });
    }
    if pick(rng, 3) != 0 {
        s.transitions.push(Transition {
            on: TransitionMatch::Default,
            next: next(rng),
        });
    }
    s
}

/// A frame of bytes the keys are likely to meet, of any length up to 80.
fn frame(rng: &mut Rng) -> Vec<u8> {
    let n = pick(rng, 81);
    (0..n)
        .map(|_| [0, 1, 2, 0x81, 0xff][pick(rng, 5)])
        .collect()
}

/// What parsing left: fields, validity, cursor, rejection, statistics.
fn parsed(p: &Program, f: &[u8]) -> (Vec<u64>, Vec<bool>, usize, bool, crate::exec::ExecStats) {
    let mut st = State::new(p, 1);
    let mut pkt = Packet::new(p);
    pkt.receive(p, f, 0);
    parse(p, &mut st, &mut pkt);
    let phv = pkt.phv;
    (
        phv.fields,
        phv.valid,
        pkt.cursor,
        pkt.flags.rejected,
        st.stats,
    )
}

#[test]
fn random_parse_graphs_parse_random_frames_as_interpreted() {
    let base = crate::load::load(PARSER).expect("fixture loads");
    let hs = headers(&base);
    let mut rng = Rng::new(11);
    let (mut compiled, mut errors) = (0, 0);
    let (mut ended, mut resumed, mut at_once) = (0, 0, 0);
    for graph in 0..300 {
        let mut p = base.clone();
        let n = 1 + pick(&mut rng, 7);
        p.parse_states = (0..n).map(|_| state(&base, &hs, n, &mut rng)).collect();
        p.init_state = Some(0);
        let interpreted = p.clone();
        let report = compile(&mut p);
        compiled += report.parser_states;
        if report.parser_states == 0 {
            assert!(p.native_parser.is_none());
            continue;
        }
        for _ in 0..40 {
            let f = frame(&mut rng);
            let got = parsed(&p, &f);
            assert_eq!(
                got,
                parsed(&interpreted, &f),
                "graph {graph}, frame {f:02x?}"
            );
            errors += usize::from(got.4.parser_errors > 0);
            let mut pkt = Packet::new(&p);
            pkt.receive(&p, &f, 0);
            match p.native_parser.as_ref().and_then(|n| n.parse(&mut pkt, 0)) {
                Some(ParseEnd::Resume { steps: 0, .. }) => at_once += 1,
                Some(ParseEnd::Resume { .. }) => resumed += 1,
                Some(_) => ended += 1,
                None => panic!("the compiled parser refused parser.json's packet"),
            }
        }
    }
    // The graphs compile most states; frames end in compiled code, go to the
    // interpreter at the start or on the way, and meet its errors.
    assert!(compiled > 600, "{compiled} states compiled");
    assert!(
        ended > 2000 && resumed > 1000 && at_once > 1000,
        "{ended} {resumed} {at_once}"
    );
    assert!(errors > 500, "{errors} parser errors");
}

#[test]
fn a_loop_of_compiled_states_ends_at_the_step_limit_as_interpreted() {
    let mut p = crate::load::load(PARSER).expect("fixture loads");
    let eth = p.header_by_name["eth"];
    let ether_type = p.field("eth.type").expect("eth.type");
    let to = |on, next| Transition { on, next };
    let state = |ops, key, transitions| ParseState {
        name: "s".into(),
        ops,
        key,
        transitions,
        key_lookahead: 0,
        reject: false,
    };
    // Ethernet, then, for ether type 0x8181, two states without operations
    // jumping to each other for ever.
    p.parse_states = vec![
        state(
            vec![ParserOp::Extract(ExtractTarget::Header(eth))],
            vec![],
            vec![to(TransitionMatch::Default, Some(1))],
        ),
        state(
            vec![],
            vec![KeyComponent {
                expr: Expr::Field(ether_type),
                width: 16,
            }],
            vec![
                to(TransitionMatch::Value(vec![(0x8181, u128::MAX)]), Some(2)),
                to(TransitionMatch::Default, None),
            ],
        ),
        state(vec![], vec![], vec![to(TransitionMatch::Default, Some(1))]),
    ];
    p.init_state = Some(0);
    let interpreted = p.clone();
    assert_eq!(compile(&mut p).parser_states, 3);
    let timeout = p
        .errors
        .iter()
        .find(|e| e.0 == "ParserTimeout")
        .map(|e| e.1);
    let too_short = p.error_codes.packet_too_short;
    let error = p.std.parser_error.expect("v1model's parser_error");
    // Compiled states read 8 bytes from each field's first byte, so a frame
    // of 14 bytes goes to the interpreter at once, one of 20 loops in
    // compiled code.
    let timeout = timeout.expect("ParserTimeout");
    for (f, code, cursor) in [
        (vec![0x81; 20], timeout, 14),
        (vec![0x81; 14], timeout, 14),
        (vec![0; 20], 0, 14),
        (vec![0x81; 13], too_short, 0),
    ] {
        let got = parsed(&p, &f);
        assert_eq!(got, parsed(&interpreted, &f), "{} bytes", f.len());
        assert_eq!(got.0[error as usize] as u32, code, "{} bytes", f.len());
        assert_eq!(got.2, cursor, "{} bytes", f.len());
    }
}
