//! The sender's scoreboard (RFC 6675): every segment between snd_una and snd_nxt with
//! its send time, whether the peer SACKed it, whether it is deemed lost and whether a
//! retransmission of it is in flight; and `pipe`, the sender's estimate of bytes in
//! the network, kept as running sums so an ACK costs what it changes, not the window.

use std::collections::VecDeque;

use super::ranges::RangeSet;

/// One segment the sender has sent and the peer has not acknowledged cumulatively.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SentSegment {
    /// First byte (stream offset).
    pub start: u64,
    /// One past the last byte.
    pub end: u64,
    /// When it was last sent, ns.
    pub xmit_ns: u64,
    /// It has been sent more than once.
    pub retransmitted: bool,
    /// A retransmission of it is counted in pipe.
    pub retx_in_flight: bool,
    /// The peer SACKed it.
    pub sacked: bool,
    /// It is deemed lost.
    pub lost: bool,
}

impl SentSegment {
    fn len(&self) -> u64 {
        self.end - self.start
    }
}

/// A segment the peer newly acknowledged or SACKed: what RTT sampling and RACK need.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Delivered {
    /// When it was last sent, ns.
    pub xmit_ns: u64,
    /// One past its last byte.
    pub end: u64,
    /// It had been retransmitted (its RTT is ambiguous).
    pub retransmitted: bool,
}

/// What a cumulative ACK did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AckOutcome {
    /// Bytes newly acknowledged.
    pub acked_bytes: u64,
    /// The most recently sent delivered segment never retransmitted (Karn's sample).
    pub newest_clean: Option<Delivered>,
    /// The most recently sent delivered segment, retransmitted or not (RACK).
    pub newest: Option<Delivered>,
}

fn newer(a: Option<Delivered>, b: Delivered) -> Option<Delivered> {
    match a {
        Some(a) if (a.xmit_ns, a.end) >= (b.xmit_ns, b.end) => Some(a),
        _ => Some(b),
    }
}

/// The scoreboard.
#[derive(Debug, Clone, Default)]
pub struct Scoreboard {
    segs: VecDeque<SentSegment>,
    sacked: RangeSet,
    lost_bytes: u64,
    retx_bytes: u64,
    sack_lost_upto: u64,
    rtx_hint: u64,
}

impl Scoreboard {
    /// Segments outstanding.
    pub fn segments(&self) -> &VecDeque<SentSegment> {
        &self.segs
    }

    /// Bytes SACKed above snd_una.
    pub fn sacked_bytes(&self) -> u64 {
        self.sacked.bytes()
    }

    /// Bytes deemed lost and not SACKed.
    pub fn lost_bytes(&self) -> u64 {
        self.lost_bytes
    }

    /// The highest SACKed byte plus one.
    pub fn highest_sacked(&self) -> Option<u64> {
        self.sacked.end()
    }

    /// RFC 6675's pipe: outstanding bytes not SACKed and not lost, plus retransmissions
    /// in flight.
    pub fn pipe(&self) -> u64 {
        let outstanding = match (self.segs.front(), self.segs.back()) {
            (Some(f), Some(b)) => b.end - f.start,
            _ => 0,
        };
        (outstanding + self.retx_bytes).saturating_sub(self.sacked.bytes() + self.lost_bytes)
    }

    /// Records a new segment `[start, end)` sent at `now_ns`.
    pub fn push(&mut self, start: u64, end: u64, now_ns: u64) {
        self.segs.push_back(SentSegment {
            start,
            end,
            xmit_ns: now_ns,
            retransmitted: false,
            retx_in_flight: false,
            sacked: false,
            lost: false,
        });
    }

    fn index_of(&self, at: u64) -> Option<usize> {
        let i = self.segs.partition_point(|s| s.end <= at);
        (i < self.segs.len() && self.segs[i].start <= at).then_some(i)
    }

    /// The segment that holds byte `at`.
    pub fn segment_at(&self, at: u64) -> Option<&SentSegment> {
        self.index_of(at).map(|i| &self.segs[i])
    }

    /// Removes what a cumulative ACK up to `ack` covers.
    pub fn ack(&mut self, ack: u64) -> AckOutcome {
        let mut out = AckOutcome::default();
        while let Some(front) = self.segs.front_mut() {
            if front.start >= ack {
                break;
            }
            if front.end > ack {
                // A partial acknowledgment: keep the rest of the segment.
                let part = ack - front.start;
                if front.lost && !front.sacked {
                    self.lost_bytes -= part;
                }
                if front.retx_in_flight && !front.sacked {
                    self.retx_bytes -= part;
                }
                front.start = ack;
                out.acked_bytes += part;
                break;
            }
            let s = *front;
            self.segs.pop_front();
            out.acked_bytes += s.len();
            if !s.sacked {
                if s.lost {
                    self.lost_bytes -= s.len();
                }
                if s.retx_in_flight {
                    self.retx_bytes -= s.len();
                }
                let d = Delivered {
                    xmit_ns: s.xmit_ns,
                    end: s.end,
                    retransmitted: s.retransmitted,
                };
                out.newest = newer(out.newest, d);
                if !s.retransmitted {
                    out.newest_clean = newer(out.newest_clean, d);
                }
            }
        }
        self.sacked.remove_below(ack);
        self.sack_lost_upto = self.sack_lost_upto.max(ack);
        self.rtx_hint = self.rtx_hint.max(ack);
        out
    }

    /// Applies one SACK block; calls `delivered` for each segment it newly SACKs.
    /// Returns the bytes newly SACKed.
    pub fn sack(&mut self, start: u64, end: u64, mut delivered: impl FnMut(Delivered)) -> u64 {
        let (Some(first), Some(last)) = (self.segs.front(), self.segs.back()) else {
            return 0;
        };
        let (start, end) = (start.max(first.start), end.min(last.end));
        if start >= end {
            return 0;
        }
        let segs = &mut self.segs;
        let lost_bytes = &mut self.lost_bytes;
        let retx_bytes = &mut self.retx_bytes;
        let mut newly = 0;
        self.sacked.insert(start, end, |a, b| {
            let mut i = segs.partition_point(|s| s.end <= a);
            while i < segs.len() && segs[i].start < b {
                let s = &mut segs[i];
                // Only whole segments count as SACKed (blocks fall on segment edges).
                if !s.sacked && s.start >= a && s.end <= b {
                    s.sacked = true;
                    newly += s.len();
                    if s.lost {
                        *lost_bytes -= s.len();
                    }
                    if s.retx_in_flight {
                        *retx_bytes -= s.len();
                        s.retx_in_flight = false;
                    }
                    delivered(Delivered {
                        xmit_ns: s.xmit_ns,
                        end: s.end,
                        retransmitted: s.retransmitted,
                    });
                }
                i += 1;
            }
        });
        newly
    }

    fn mark(&mut self, i: usize) -> u64 {
        let s = &mut self.segs[i];
        if s.sacked || (s.lost && !s.retx_in_flight) {
            return 0;
        }
        if s.retx_in_flight {
            // Its retransmission is lost too: it leaves pipe and may go again.
            s.retx_in_flight = false;
            self.retx_bytes -= s.len();
        }
        if !s.lost {
            s.lost = true;
            self.lost_bytes += s.len();
        }
        self.rtx_hint = self.rtx_hint.min(s.start);
        s.len()
    }

    /// RFC 6675's IsLost for every segment: a segment is lost when more than
    /// (DupThresh − 1)·SMSS bytes above it are SACKed. Lost segments form a prefix,
    /// so marking goes on from where it stopped. Returns the bytes newly marked.
    pub fn mark_lost_by_sack(&mut self, dupthresh: u64, mss: u64) -> u64 {
        let threshold = dupthresh.saturating_sub(1) * mss;
        let Some(point) = self.sacked.point_with_more_above(threshold) else {
            return 0;
        };
        let mut newly = 0;
        let mut i = self.segs.partition_point(|s| s.end <= self.sack_lost_upto);
        while i < self.segs.len() && self.segs[i].start < point {
            if !self.segs[i].lost && !self.segs[i].sacked {
                newly += self.mark(i);
            }
            self.sack_lost_upto = self.segs[i].end;
            i += 1;
        }
        newly
    }

    /// Marks the first outstanding segment lost (dupACKs without SACK, RFC 6582's
    /// partial ACK). Returns the bytes newly marked.
    pub fn mark_head_lost(&mut self) -> u64 {
        if self.segs.front().is_some_and(|s| !s.lost && !s.sacked) {
            self.mark(0)
        } else {
            0
        }
    }

    /// After a retransmission timeout every unSACKed segment is lost and no
    /// retransmission is in flight.
    pub fn mark_all_lost(&mut self) {
        self.lost_bytes = 0;
        self.retx_bytes = 0;
        for s in &mut self.segs {
            s.retx_in_flight = false;
            if !s.sacked {
                s.lost = true;
                self.lost_bytes += s.len();
            }
        }
        self.rtx_hint = self.segs.front().map_or(0, |s| s.start);
    }

    /// RACK's loss detection (RFC 8985 6.2 step 5): every unSACKed segment sent before
    /// the most recently delivered one (`rack_xmit_ns`, `rack_end`) and outstanding for
    /// longer than `wait_ns` (RACK.rtt + reo_wnd) is lost. Returns the bytes newly
    /// marked and, if some must still wait, how long until the first of them is due.
    ///
    /// The walk goes in sequence order and stops at the first never-retransmitted
    /// segment sent after the reference (all later ones were sent later still); a
    /// retransmission above that point waits for its own turn or the RTO.
    pub fn mark_lost_by_time(
        &mut self,
        rack_xmit_ns: u64,
        rack_end: u64,
        wait_ns: u64,
        now_ns: u64,
    ) -> (u64, Option<u64>) {
        let mut newly = 0;
        let mut timeout: Option<u64> = None;
        let mut i = 0;
        while i < self.segs.len() {
            let s = self.segs[i];
            if s.sacked {
                // Skip the whole SACKed run.
                let run_end = self.sacked.containing(s.start).map_or(s.end, |r| r.1);
                i = self.segs.partition_point(|x| x.end <= run_end.max(s.end));
                continue;
            }
            let sent_before = (s.xmit_ns, s.end) < (rack_xmit_ns, rack_end);
            if !sent_before {
                if !s.retransmitted {
                    break;
                }
                i += 1;
                continue;
            }
            if !s.lost || s.retx_in_flight {
                let due = s.xmit_ns + wait_ns;
                if due <= now_ns {
                    newly += self.mark(i);
                } else {
                    let left = due - now_ns;
                    timeout = Some(timeout.map_or(left, |t| t.max(left)));
                }
            }
            i += 1;
        }
        (newly, timeout)
    }

    /// The first lost segment with no retransmission in flight (RFC 6675 NextSeg rule 1).
    pub fn next_retransmission(&self) -> Option<(u64, u64)> {
        let mut i = self.segs.partition_point(|s| s.end <= self.rtx_hint);
        while i < self.segs.len() {
            let s = &self.segs[i];
            if s.sacked {
                let run_end = self.sacked.containing(s.start).map_or(s.end, |r| r.1);
                i = self.segs.partition_point(|x| x.end <= run_end.max(s.end));
                continue;
            }
            if s.lost && s.retx_in_flight {
                i += 1;
                continue;
            }
            return s.lost.then_some((s.start, s.end));
        }
        None
    }

    /// Records that the segment starting at `start` was sent again at `now_ns`: its
    /// copy counts in pipe (beside the original unless that is deemed lost). `in_order`
    /// says it was what `next_retransmission` gave, so the search may start after it.
    pub fn retransmitted(&mut self, start: u64, now_ns: u64, in_order: bool) {
        if let Some(i) = self.index_of(start) {
            let s = &mut self.segs[i];
            s.xmit_ns = now_ns;
            s.retransmitted = true;
            if !s.retx_in_flight && !s.sacked {
                s.retx_in_flight = true;
                self.retx_bytes += s.end - s.start;
            }
            if in_order {
                self.rtx_hint = self.rtx_hint.max(s.end);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    fn board(n: u64) -> Scoreboard {
        let mut b = Scoreboard::default();
        for k in 0..n {
            b.push(k * MSS, (k + 1) * MSS, k * 10);
        }
        b
    }

    #[test]
    fn three_sacked_segments_above_a_hole_make_it_lost() {
        let mut b = board(10);
        assert_eq!(b.pipe(), 10 * MSS);
        // Segment 0 lost; 1 and 2 SACKed: 2,000 bytes above it, not more than 2·MSS.
        b.sack(MSS, 3 * MSS, |_| {});
        assert_eq!(b.mark_lost_by_sack(3, MSS), 0);
        assert_eq!(b.pipe(), 8 * MSS);
        b.sack(3 * MSS, 4 * MSS, |_| {});
        assert_eq!(b.mark_lost_by_sack(3, MSS), MSS);
        assert_eq!(b.pipe(), 6 * MSS, "10 out − 3 SACKed − 1 lost");
        assert_eq!(b.next_retransmission(), Some((0, MSS)));
        b.retransmitted(0, 500, true);
        assert_eq!(b.pipe(), 7 * MSS, "the retransmission is in flight");
        assert_eq!(b.next_retransmission(), None);
        let out = b.ack(4 * MSS);
        assert_eq!(
            out.acked_bytes,
            4 * MSS,
            "the cumulative ACK moved by four segments"
        );
        assert_eq!(
            out.newest_clean, None,
            "only a retransmission was acked: no sample"
        );
        assert_eq!(b.pipe(), 6 * MSS);
        assert_eq!(b.sacked_bytes(), 0);
    }

    #[test]
    fn rack_marks_by_time_and_reports_the_wait() {
        let mut b = board(6);
        // Segment 3 (sent at 30) delivered; 0..3 were sent before it.
        let mut newest = None;
        b.sack(3 * MSS, 4 * MSS, |d| newest = Some(d));
        let d = newest.unwrap();
        assert_eq!((d.xmit_ns, d.end), (30, 4 * MSS));
        // RACK.rtt + reo_wnd = 100: at now 125, segments sent at 0, 10, 20 are due at
        // 100, 110, 120: all lost; nothing waits.
        assert_eq!(b.mark_lost_by_time(30, 4 * MSS, 100, 125), (3 * MSS, None));
        let mut b = board(6);
        b.sack(3 * MSS, 4 * MSS, |_| {});
        // At 105 only the first is due; the last due at 120 must wait 15 ns.
        assert_eq!(b.mark_lost_by_time(30, 4 * MSS, 100, 105), (MSS, Some(15)));
        assert_eq!(b.lost_bytes(), MSS);
    }

    #[test]
    fn a_timeout_makes_every_unsacked_segment_lost() {
        let mut b = board(5);
        b.sack(2 * MSS, 3 * MSS, |_| {});
        b.retransmitted(0, 100, false);
        b.mark_all_lost();
        assert_eq!(b.lost_bytes(), 4 * MSS);
        assert_eq!(b.pipe(), 0);
        assert_eq!(b.next_retransmission(), Some((0, MSS)));
        b.retransmitted(0, 200, true);
        assert_eq!(b.next_retransmission(), Some((MSS, 2 * MSS)));
        b.retransmitted(MSS, 200, true);
        assert_eq!(
            b.next_retransmission(),
            Some((3 * MSS, 4 * MSS)),
            "SACKed 2 skipped"
        );
    }
}
