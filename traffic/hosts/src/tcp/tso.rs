//! Linux's GSO sizing and TSO deferral, which make an unpaced Linux sender send in
//! bursts of about a millisecond of its rate instead of a segment or two per ACK.
//!
//! Linux hands its NIC (or software GSO) one buffer of several segments at a time:
//! `tcp_tso_autosize` sizes it at the socket's pacing rate (computed even when nothing
//! paces: 120 % of cwnd/SRTT, 200 % early in slow start) shifted by `sk_pacing_shift`
//! (2⁻¹⁰ s), at least 2 segments, at most `gso_max_size`. Outside recovery,
//! `tcp_tso_should_defer` holds new data back while the room cwnd leaves is smaller
//! than such a buffer and than a third of the window, the oldest unacknowledged segment
//! left at least half an SRTT ago, and the last transmission was under 1 ms ago: the
//! next ACK looks again. The segments go out back to back when it lets them.
//!
//! Through a small buffer this matters: at 100 Mbit/s and 10 ms Linux's CUBIC sent
//! bursts of 6-10 frames about 1 ms apart (`experiments/tcp_validation` README), which
//! queue at the bottleneck even below one BDP in flight, so Linux needs a larger window
//! than a per-ACK sender to keep the link busy.

/// Linux's `sk_pacing_shift`: a buffer holds the pacing rate's bytes of 2⁻¹⁰ s.
const PACING_SHIFT: u32 = 10;
/// `tcp_min_tso_segs`.
const MIN_TSO_SEGMENTS: u64 = 2;
/// `tcp_tso_win_divisor`: a third of the window is always worth sending.
const WIN_DIVISOR: u64 = 3;
/// Deferral never holds data more than 1 ms after the last transmission.
const MAX_DEFER_NS: u64 = 1_000_000;
/// `tcp_tso_rtt_log`: paths with a least RTT under 2⁹ µs get larger buffers.
const TSO_RTT_LOG: u32 = 9;
/// Linux's default `gso_max_size` (GSO_LEGACY_MAX_SIZE), bytes.
pub const GSO_MAX_BYTES: u64 = 65_536;

/// What Linux's sizing reads from the socket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sizing {
    /// cwnd, bytes.
    pub cwnd: u64,
    /// ssthresh, bytes (u64::MAX before the first reduction).
    pub ssthresh: u64,
    /// Bytes sent and not cumulatively acknowledged (Linux's packets_out).
    pub outstanding: u64,
    /// SRTT, ns.
    pub srtt_ns: u64,
    /// The least RTT, ns.
    pub min_rtt_ns: u64,
    /// MSS, bytes.
    pub mss: u64,
}

/// Segments in one GSO buffer (`tcp_tso_autosize`).
pub fn autosize_segments(s: &Sizing) -> u64 {
    // tcp_update_pacing_rate: 200 % of cwnd/SRTT while cwnd < ssthresh/2, else 120 %.
    let percent = if s.cwnd < s.ssthresh / 2 { 200 } else { 120 };
    let window = u128::from(s.cwnd.max(s.outstanding));
    let rate_bytes_per_s = window * percent * 10_000_000 / u128::from(s.srtt_ns.max(1)); // × 1e9 / 100
    let mut bytes = rate_bytes_per_s >> PACING_SHIFT;
    let shift = (s.min_rtt_ns / 1000) >> TSO_RTT_LOG;
    if shift < 32 {
        bytes += u128::from(GSO_MAX_BYTES >> shift);
    }
    let bytes = u64::try_from(bytes.min(u128::from(GSO_MAX_BYTES))).unwrap_or(GSO_MAX_BYTES);
    (bytes / s.mss.max(1)).max(MIN_TSO_SEGMENTS)
}

/// The moment's state `tcp_tso_should_defer` weighs, bytes and ns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeferCheck {
    /// Now.
    pub now_ns: u64,
    /// When the sender last put a segment on the wire.
    pub last_sent_ns: u64,
    /// When the oldest unacknowledged segment was (last) sent; None with nothing out.
    pub oldest_sent_ns: Option<u64>,
    /// What cwnd and the receive window let go now.
    pub room: u64,
    /// cwnd, bytes.
    pub cwnd: u64,
    /// The receive window, bytes.
    pub peer_window: u64,
    /// One GSO buffer, bytes (`autosize_segments` × MSS).
    pub buffer: u64,
    /// SRTT, ns.
    pub srtt_ns: u64,
}

/// Whether Linux would hold new data back now (`tcp_tso_should_defer` outside
/// recovery, for a bulk sender whose queued data fills every buffer).
pub fn should_defer(c: &DeferCheck) -> bool {
    if c.now_ns.saturating_sub(c.last_sent_ns) > MAX_DEFER_NS {
        return false;
    }
    if c.room >= c.buffer {
        return false;
    }
    if c.room >= c.peer_window.min(c.cwnd) / WIN_DIVISOR {
        return false;
    }
    // If the next ACK is likely to come too late (the oldest segment left less than
    // half an SRTT ago), do not wait for it.
    match c.oldest_sent_ns {
        None => false,
        Some(sent) => c.now_ns.saturating_sub(sent) >= c.srtt_ns / 2,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn sizing(cwnd_segments: u64) -> Sizing {
        Sizing {
            cwnd: cwnd_segments * 1460,
            ssthresh: 64 * 1460,
            outstanding: 0,
            srtt_ns: 10_800_000,
            min_rtt_ns: 10_170_000,
            mss: 1460,
        }
    }

    #[test]
    fn a_buffer_holds_a_millisecond_of_the_pacing_rate() {
        // 120 % × 90 × 1,460 B / 10.8 ms = 14,600,000 B/s; >> 10 = 14,257 B: 9 segments
        // (the live bursts at 100 Mbit/s and 10 ms: up to 10 frames).
        assert_eq!(autosize_segments(&sizing(90)), 9);
        // Early in slow start the rate is 200 %: 20 × 1,460 × 2 / 10.8 ms >> 10 = 5,280 B.
        let mut early = sizing(20);
        early.ssthresh = u64::MAX;
        assert_eq!(autosize_segments(&early), 3);
        // Never under 2 segments, never over 64 KiB.
        assert_eq!(autosize_segments(&sizing(2)), 2);
        let mut fast = sizing(90);
        fast.srtt_ns = 10_000;
        assert_eq!(autosize_segments(&fast), 65_536 / 1460);
        // The outstanding data counts when above cwnd (Linux: max(cwnd, packets_out)).
        let mut behind = sizing(45);
        behind.outstanding = 90 * 1460;
        assert_eq!(autosize_segments(&behind), 9);
    }

    #[test]
    fn a_short_least_rtt_adds_to_the_buffer() {
        // 200 µs >> 9 = 0: the whole 64 KiB added, capped at 64 KiB.
        let mut lan = sizing(10);
        lan.min_rtt_ns = 200_000;
        lan.srtt_ns = 200_000;
        assert_eq!(autosize_segments(&lan), 44);
        // 2 ms >> 9 = 3: 8 KiB more than the rate's (200 %: cwnd under ssthresh / 2)
        // 2 × 10 × 1,460 B / 2 ms >> 10 = 14,257 B: 22,449 B, 15 segments.
        let mut near = sizing(10);
        near.min_rtt_ns = 2 * MS;
        near.srtt_ns = 2 * MS;
        assert_eq!(autosize_segments(&near), 15);
    }

    fn check() -> DeferCheck {
        DeferCheck {
            now_ns: 100 * MS,
            last_sent_ns: 100 * MS - 250_000,
            oldest_sent_ns: Some(89 * MS),
            room: 2 * 1460,
            cwnd: 90 * 1460,
            peer_window: 1 << 21,
            buffer: 9 * 1460,
            srtt_ns: 10_800_000,
        }
    }

    #[test]
    fn two_segments_of_room_wait_for_the_next_ack() {
        assert!(should_defer(&check()));
    }

    #[test]
    fn each_rule_that_sends_now() {
        // A millisecond since the last transmission.
        let mut c = check();
        c.last_sent_ns = c.now_ns - MS - 1;
        assert!(!should_defer(&c));
        c.last_sent_ns = c.now_ns - MS;
        assert!(
            should_defer(&c),
            "1 ms exactly still defers (Linux: delta > 0)"
        );
        // Room for a whole buffer.
        let mut c = check();
        c.room = c.buffer;
        assert!(!should_defer(&c));
        // A third of the window (the smaller of cwnd and the receive window).
        let mut c = check();
        c.buffer = 40 * 1460;
        c.room = 30 * 1460;
        assert!(!should_defer(&c));
        c.peer_window = 60 * 1460;
        c.room = 20 * 1460;
        assert!(!should_defer(&c));
        c.room = 19 * 1460;
        assert!(should_defer(&c));
        // The oldest segment left less than half an SRTT ago, or nothing is out.
        let mut c = check();
        c.oldest_sent_ns = Some(c.now_ns - c.srtt_ns / 2 + 1);
        assert!(!should_defer(&c));
        c.oldest_sent_ns = None;
        assert!(!should_defer(&c));
    }
}
