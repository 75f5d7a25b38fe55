//! RACK's state (RFC 8985 6.1–6.2): the most recently sent segment the peer has
//! delivered, its RTT, and the reordering window.

use super::scoreboard::Delivered;

/// RACK.
#[derive(Debug, Clone, Default)]
pub struct Rack {
    /// RACK.xmit_ts: send time of the most recently sent delivered segment, ns.
    pub xmit_ns: u64,
    /// RACK.end_seq of that segment.
    pub end: u64,
    /// RACK.rtt: its RTT, ns.
    pub rtt_ns: u64,
    /// Whether any segment was delivered yet.
    pub active: bool,
    /// RACK.fack: the highest end delivered.
    pub fack: u64,
    /// Reordering was seen (a segment delivered below RACK.fack, never retransmitted).
    pub reordering_seen: bool,
}

impl Rack {
    /// RFC 8985 6.2 steps 2–3 for one delivered segment at `now_ns`; `min_rtt_ns`
    /// tells a retransmission's ambiguous delivery from a real one.
    pub fn delivered(&mut self, d: Delivered, now_ns: u64, min_rtt_ns: Option<u64>) {
        let rtt = now_ns.saturating_sub(d.xmit_ns);
        if d.retransmitted && min_rtt_ns.is_some_and(|m| rtt < m) {
            // Delivered sooner than any RTT: the original, not this copy, arrived.
            return;
        }
        if !self.active || (d.xmit_ns, d.end) > (self.xmit_ns, self.end) {
            self.xmit_ns = d.xmit_ns;
            self.end = d.end;
            self.rtt_ns = rtt;
            self.active = true;
        }
        if d.end < self.fack && !d.retransmitted {
            self.reordering_seen = true;
        }
        self.fack = self.fack.max(d.end);
    }

    /// RACK.reo_wnd (6.2 step 4, without DSACK-driven growth): 0 in recovery or once
    /// DupThresh segments are SACKed while no reordering was seen, else min_RTT/4
    /// bounded by SRTT.
    pub fn reo_wnd_ns(
        &self,
        in_recovery: bool,
        sacked_segments: u64,
        dupthresh: u64,
        min_rtt_ns: u64,
        srtt_ns: u64,
    ) -> u64 {
        if !self.reordering_seen && (in_recovery || sacked_segments >= dupthresh) {
            return 0;
        }
        (min_rtt_ns / 4).min(srtt_ns)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(xmit: u64, end: u64, retx: bool) -> Delivered {
        Delivered {
            xmit_ns: xmit,
            end,
            retransmitted: retx,
        }
    }

    #[test]
    fn keeps_the_most_recently_sent_and_ignores_ambiguous_copies() {
        let mut r = Rack::default();
        r.delivered(d(100, 2000, false), 1100, None);
        assert_eq!((r.xmit_ns, r.end, r.rtt_ns), (100, 2000, 1000));
        r.delivered(d(50, 1000, false), 1200, Some(1000));
        assert_eq!(r.xmit_ns, 100, "an older send does not move RACK");
        assert!(
            r.reordering_seen,
            "delivered below fack, never retransmitted"
        );
        // A retransmission acked 10 ns after it left: the original was delivered.
        r.delivered(d(1190, 3000, true), 1200, Some(1000));
        assert_eq!(r.xmit_ns, 100);
        assert_eq!(r.reo_wnd_ns(false, 0, 3, 1000, 1200), 250);
        let fresh = Rack::default();
        assert_eq!(fresh.reo_wnd_ns(true, 0, 3, 1000, 1200), 0);
        assert_eq!(fresh.reo_wnd_ns(false, 3, 3, 1000, 1200), 0);
        assert_eq!(fresh.reo_wnd_ns(false, 2, 3, 1000, 1200), 250);
    }
}
