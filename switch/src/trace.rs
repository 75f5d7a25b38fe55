//! The per-packet trace: what simple_switch logs for each packet at `--log-level debug`
//! and `trace` (parser states, extracted headers, table keys, hits and misses, actions,
//! primitives with their source lines, conditions, the egress port, deparsed headers,
//! transmissions and drops), in BMv2's wording so that students' habits and the tutorials'
//! instructions carry over.
//!
//! The engine holds a [`Tracer`] only while tracing is on; every trace point on the packet
//! path first asks whether there is one, so a switch that does not trace pays one branch
//! per point and formats nothing. Lines are kept in a bounded queue for the process around
//! the engine to write out, each with the engine time and the packet's `[id.copy]`.

use std::collections::VecDeque;
use std::fmt;

/// Severity of a trace line, as BMv2 names them (`[T]`, `[D]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum TraceLevel {
    /// Every step: parser byte counts, tables applied, actions, primitives, conditions.
    Trace,
    /// The packet's events: parser states and headers, keys, hits, egress, deparse, transmit.
    Debug,
}

impl TraceLevel {
    /// BMv2's one-letter tag.
    pub fn letter(self) -> char {
        match self {
            TraceLevel::Trace => 'T',
            TraceLevel::Debug => 'D',
        }
    }
}

/// One trace line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceLine {
    /// Engine time when the event happened, ns.
    pub t_ns: u64,
    /// Severity.
    pub level: TraceLevel,
    /// Packet id: one per frame received.
    pub packet: u64,
    /// Copy number within the packet (0 for the packet itself; clones, replicas,
    /// resubmitted and recirculated passes count up).
    pub copy: u32,
    /// The message, in BMv2's words.
    pub text: String,
}

/// Collects trace lines at or above a level, keeping at most `capacity` of them.
#[derive(Debug, Clone)]
pub struct Tracer {
    level: TraceLevel,
    capacity: usize,
    lines: VecDeque<TraceLine>,
    dropped: u64,
}

impl Tracer {
    /// A tracer keeping lines of `level` and above, at most `capacity` unread.
    pub fn new(level: TraceLevel, capacity: usize) -> Self {
        Tracer {
            level,
            capacity: capacity.max(1),
            lines: VecDeque::new(),
            dropped: 0,
        }
    }

    /// The lowest level kept.
    pub fn level(&self) -> TraceLevel {
        self.level
    }

    /// Whether lines of `level` are kept (so their text need not be built otherwise).
    pub fn wants(&self, level: TraceLevel) -> bool {
        level >= self.level
    }

    /// Records one line for packet `[packet.copy]` at `t_ns`; when the queue is full the
    /// oldest line goes (counted), so a slow reader loses history, never the newest packet.
    pub fn emit(
        &mut self,
        level: TraceLevel,
        t_ns: u64,
        packet: u64,
        copy: u32,
        text: fmt::Arguments<'_>,
    ) {
        if !self.wants(level) {
            return;
        }
        if self.lines.len() >= self.capacity {
            self.lines.pop_front();
            self.dropped += 1;
        }
        self.lines.push_back(TraceLine {
            t_ns,
            level,
            packet,
            copy,
            text: text.to_string(),
        });
    }

    /// Takes the lines recorded so far and how many were lost to the bound since the
    /// last call.
    pub fn take(&mut self) -> (Vec<TraceLine>, u64) {
        let dropped = std::mem::take(&mut self.dropped);
        (self.lines.drain(..).collect(), dropped)
    }
}

/// [`Tracer::emit`] out of line and marked cold, so that the packet path keeps only the
/// check for a tracer and the code that formats a line stays out of its way.
#[cold]
#[inline(never)]
pub fn emit_cold(
    tracer: &mut Tracer,
    level: TraceLevel,
    t_ns: u64,
    packet: u64,
    copy: u32,
    text: fmt::Arguments<'_>,
) {
    tracer.emit(level, t_ns, packet, copy, text);
}

/// Records a trace line for a packet when the state holds a tracer; formats nothing
/// otherwise. `trace_pkt!(st, pkt, Debug, "Egress port is {}", port)`.
#[macro_export]
macro_rules! trace_pkt {
    ($st:expr, $pkt:expr, $level:ident, $($arg:tt)*) => {
        if let Some(tracer) = $st.trace.as_deref_mut() {
            $crate::trace::emit_cold(
                tracer,
                $crate::trace::TraceLevel::$level,
                $pkt.now,
                $pkt.id,
                $pkt.copy,
                format_args!($($arg)*),
            );
        }
    };
}

/// As [`trace_pkt!`], in a function generic over `const TRACED: bool`: the untraced form
/// compiles to nothing at all, so the packet path does not even check for a tracer.
#[macro_export]
macro_rules! trace_if {
    ($traced:expr, $st:expr, $pkt:expr, $level:ident, $($arg:tt)*) => {
        if $traced {
            $crate::trace_pkt!($st, $pkt, $level, $($arg)*);
        }
    };
}

/// Hex digits of `v` for a `width`-bit value, zero-padded to whole bytes as BMv2 prints
/// keys (`0800` for a 16-bit EtherType, `0a000303` for an IPv4 address).
pub fn hex_bytes(v: u128, width: u32) -> String {
    let digits = (width.div_ceil(8).max(1) * 2) as usize;
    format!("{v:0digits$x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_lines_at_or_above_its_level() {
        let mut t = Tracer::new(TraceLevel::Debug, 8);
        t.emit(TraceLevel::Trace, 1, 0, 0, format_args!("hidden"));
        t.emit(TraceLevel::Debug, 2, 3, 1, format_args!("port {}", 4));
        let (lines, dropped) = t.take();
        assert_eq!(dropped, 0);
        assert_eq!(
            lines,
            vec![TraceLine {
                t_ns: 2,
                level: TraceLevel::Debug,
                packet: 3,
                copy: 1,
                text: "port 4".into()
            }]
        );
        assert!(t.take().0.is_empty());
    }

    #[test]
    fn a_full_queue_loses_its_oldest_lines_and_counts_them() {
        let mut t = Tracer::new(TraceLevel::Trace, 2);
        for i in 0..5 {
            t.emit(TraceLevel::Trace, i, i, 0, format_args!("{i}"));
        }
        let (lines, dropped) = t.take();
        assert_eq!(dropped, 3);
        assert_eq!(
            lines.iter().map(|l| l.text.as_str()).collect::<Vec<_>>(),
            ["3", "4"]
        );
    }

    #[test]
    fn hex_is_padded_to_whole_bytes() {
        assert_eq!(hex_bytes(0x800, 16), "0800");
        assert_eq!(hex_bytes(1, 9), "0001");
        assert_eq!(hex_bytes(0x0a00_0303, 32), "0a000303");
        assert_eq!(hex_bytes(0, 1), "00");
    }
}
