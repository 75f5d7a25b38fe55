//! BCN frames and the reaction point (RP) at a host (congestion.md §1.2–1.4,
//! p4src/README.md "BCN frame").
//!
//! On a BCN with feedback Fb (64-byte pages, |Fb| saturated at Fbmax):
//! negative ⇒ R ← R·(1 − Gd·|Fb|); positive ⇒ R ← R + Gi·Fb·Ru; severe ⇒ the
//! largest decrease (Fb = −Fbmax). R stays within [Rmin, line rate]. The first
//! negative BCN installs the limiter and the rate-limiter tag RLT(CPID); when R is
//! back at line rate the limiter and tag go. Positive BCNs count only from the
//! congestion point the source is tagged for (the CP sends them only to such sources).

use crate::frame::ETHERTYPE_VLAN;

/// EtherType of BCN frames.
pub const ETHERTYPE_BCN: u16 = 0x88B5;
/// Bytes of the BCN header after the EtherType, before the sample.
pub const BCN_HEADER_BYTES: usize = 24;

/// The fields of a BCN frame the RP acts on (qoff, qdelta, fb in 64-byte pages).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BcnFeedback {
    /// Congestion point id: switch id u32 ‖ port u16 ‖ queue u16.
    pub cpid: u64,
    /// Q − Qeq, pages.
    pub qoff_pages: i16,
    /// Q − Qold, pages.
    pub qdelta_pages: i16,
    /// −(Qoff + W·Qdelta), pages.
    pub fb_pages: i32,
    /// Q ≥ Qsc.
    pub severe: bool,
    /// Low 32 bits of the sampled frame's ingress time at the CP, µs.
    pub timestamp_us: u32,
    /// Where the sampled frame starts in the BCN frame, bytes.
    pub sample_offset: usize,
    /// Bytes of the sampled frame carried.
    pub sample_len: usize,
}

impl BcnFeedback {
    /// The sampled frame's bytes carried in `frame` (the BCN frame this was parsed from).
    pub fn sample<'a>(&self, frame: &'a [u8]) -> &'a [u8] {
        let end = (self.sample_offset + self.sample_len).min(frame.len());
        frame.get(self.sample_offset..end).unwrap_or(&[])
    }
}

fn be16(frame: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_be_bytes(frame.get(at..at + 2)?.try_into().ok()?))
}

/// Decodes a BCN frame (untagged or with one 802.1Q tag); None for anything else,
/// a version other than 0 included.
pub fn parse_bcn(frame: &[u8]) -> Option<BcnFeedback> {
    let mut at = 12;
    if be16(frame, at)? == ETHERTYPE_VLAN {
        at = 16;
    }
    if be16(frame, at)? != ETHERTYPE_BCN {
        return None;
    }
    let h = frame.get(at + 2..at + 2 + BCN_HEADER_BYTES)?;
    let ver_flags = h[0];
    if ver_flags >> 4 != 0 {
        return None;
    }
    let sample_offset = at + 2 + BCN_HEADER_BYTES;
    let carried = usize::from(u16::from_be_bytes([h[22], h[23]]));
    Some(BcnFeedback {
        cpid: u64::from_be_bytes(h[2..10].try_into().ok()?),
        qoff_pages: i16::from_be_bytes([h[10], h[11]]),
        qdelta_pages: i16::from_be_bytes([h[12], h[13]]),
        fb_pages: i32::from_be_bytes(h[14..18].try_into().ok()?),
        severe: ver_flags & 1 != 0,
        timestamp_us: u32::from_be_bytes(h[18..22].try_into().ok()?),
        sample_offset,
        sample_len: carried.min(frame.len() - sample_offset),
    })
}

/// RP parameters: rates in bit/s, Gd per 64-byte page, Gi dimensionless.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RpConfig {
    /// The host link's rate: the unlimited rate, bit/s.
    pub line_rate_bps: f64,
    /// The regulator never goes below this, bit/s.
    pub min_rate_bps: f64,
    /// Decrease gain per page of |Fb|.
    pub gd_per_page: f64,
    /// Increase gain.
    pub gi: f64,
    /// Rate unit of the increase, bit/s.
    pub ru_bps: f64,
    /// |Fb| saturates here, pages (Qeq·(1 + 2W)).
    pub fb_max_pages: i32,
}

impl RpConfig {
    /// Seed 003's gains (Gi 0.53, Gd 2.6e-4 per page, Ru 1 Mbit/s, Fbmax 1,875 pages)
    /// for a link of `line_rate_bps`, floored at `min_rate_bps`.
    pub fn seed_003(line_rate_bps: f64, min_rate_bps: f64) -> RpConfig {
        RpConfig {
            line_rate_bps,
            min_rate_bps,
            gd_per_page: 2.6e-4,
            gi: 0.53,
            ru_bps: 1e6,
            fb_max_pages: 1875,
        }
    }

    /// Checks the values: 0 < Rmin ≤ line rate, 0 < Gd·Fbmax < 1 (a cut keeps R > 0),
    /// Gi ≥ 0, Ru > 0.
    pub fn validate(&self) -> Result<(), String> {
        if !(self.min_rate_bps > 0.0 && self.min_rate_bps <= self.line_rate_bps) {
            return Err(format!(
                "need 0 < min_rate_bps <= line_rate_bps: {}, {}",
                self.min_rate_bps, self.line_rate_bps
            ));
        }
        let cut = self.gd_per_page * f64::from(self.fb_max_pages);
        if !(cut > 0.0 && cut < 1.0) {
            return Err(format!(
                "gd_per_page·fb_max_pages must be in (0, 1) so a cut keeps R > 0: {} × {}",
                self.gd_per_page, self.fb_max_pages
            ));
        }
        if !(self.gi >= 0.0 && self.ru_bps > 0.0) {
            return Err(format!(
                "need gi >= 0 and ru_bps > 0: {}, {}",
                self.gi, self.ru_bps
            ));
        }
        Ok(())
    }
}

/// The RP's state after acting on one BCN.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RateChange {
    /// When the BCN was acted on, ns.
    pub now_ns: u64,
    /// The regulated rate, bit/s.
    pub rate_bps: f64,
    /// Whether a limiter is installed.
    pub limited: bool,
    /// The CPID frames are tagged with.
    pub rlt_cpid: Option<u64>,
}

/// Pure RP logic: feed BCNs, read the regulated rate.
#[derive(Debug, Clone)]
pub struct ReactionPoint {
    config: RpConfig,
    rate_bps: f64,
    rlt_cpid: Option<u64>,
    ignored: u64,
}

impl ReactionPoint {
    /// Starts unlimited, at line rate.
    pub fn new(config: RpConfig) -> Result<ReactionPoint, String> {
        config.validate()?;
        Ok(ReactionPoint {
            rate_bps: config.line_rate_bps,
            config,
            rlt_cpid: None,
            ignored: 0,
        })
    }

    /// The parameters.
    pub fn config(&self) -> &RpConfig {
        &self.config
    }

    /// The regulated rate, bit/s (line rate when unlimited).
    pub fn rate_bps(&self) -> f64 {
        self.rate_bps
    }

    /// The CPID frames are tagged with, None when no limiter is installed.
    pub fn rlt_cpid(&self) -> Option<u64> {
        self.rlt_cpid
    }

    /// Whether a limiter is installed.
    pub fn limited(&self) -> bool {
        self.rlt_cpid.is_some()
    }

    /// BCNs that did not apply (positive without a matching tag, or Fb = 0).
    pub fn ignored(&self) -> u64 {
        self.ignored
    }

    /// Acts on one BCN at `now_ns`; None when it does not apply.
    pub fn on_bcn(&mut self, now_ns: u64, bcn: &BcnFeedback) -> Option<RateChange> {
        let cfg = self.config;
        let fb = if bcn.severe {
            -cfg.fb_max_pages
        } else {
            bcn.fb_pages.clamp(-cfg.fb_max_pages, cfg.fb_max_pages)
        };
        if fb < 0 {
            self.rate_bps *= 1.0 - cfg.gd_per_page * f64::from(-fb);
            self.rlt_cpid = Some(bcn.cpid);
        } else if fb > 0 && self.rlt_cpid == Some(bcn.cpid) {
            self.rate_bps += cfg.gi * f64::from(fb) * cfg.ru_bps;
        } else {
            self.ignored += 1;
            return None;
        }
        self.rate_bps = self.rate_bps.clamp(cfg.min_rate_bps, cfg.line_rate_bps);
        if self.rate_bps >= cfg.line_rate_bps {
            self.rlt_cpid = None;
        }
        Some(RateChange {
            now_ns,
            rate_bps: self.rate_bps,
            limited: self.limited(),
            rlt_cpid: self.rlt_cpid,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bcn(cpid: u64, fb: i32, severe: bool) -> BcnFeedback {
        BcnFeedback {
            cpid,
            qoff_pages: 0,
            qdelta_pages: 0,
            fb_pages: fb,
            severe,
            timestamp_us: 0,
            sample_offset: 0,
            sample_len: 0,
        }
    }

    fn rp() -> ReactionPoint {
        ReactionPoint::new(RpConfig::seed_003(10e9, 1e7)).unwrap()
    }

    #[test]
    fn one_negative_step_cuts_by_gd_times_fb_and_tags() {
        let mut r = rp();
        let c = r.on_bcn(1_000, &bcn(7, -1000, false)).unwrap();
        // 10 Gbit/s × (1 − 2.6e-4 × 1000) = 7.4 Gbit/s.
        assert!((c.rate_bps - 7.4e9).abs() < 1.0, "{}", c.rate_bps);
        assert_eq!(c.rlt_cpid, Some(7));
        assert!(c.limited);
    }

    #[test]
    fn a_positive_step_adds_gi_fb_ru_only_from_the_tagged_cp() {
        let mut r = rp();
        r.on_bcn(0, &bcn(7, -1000, false)).unwrap();
        assert_eq!(r.on_bcn(1, &bcn(8, 100, false)), None);
        let c = r.on_bcn(2, &bcn(7, 100, false)).unwrap();
        // 7.4 Gbit/s + 0.53 × 100 × 1 Mbit/s = 7.453 Gbit/s.
        assert!((c.rate_bps - 7.453e9).abs() < 1.0, "{}", c.rate_bps);
        assert_eq!(r.ignored(), 1);
    }

    #[test]
    fn severe_is_the_largest_cut_and_feedback_saturates() {
        let mut a = rp();
        let mut b = rp();
        let severe = a.on_bcn(0, &bcn(7, 5, true)).unwrap();
        let saturated = b.on_bcn(0, &bcn(7, -100_000, false)).unwrap();
        // 10 Gbit/s × (1 − 2.6e-4 × 1875) = 5.125 Gbit/s.
        assert!((severe.rate_bps - 5.125e9).abs() < 1.0);
        assert_eq!(severe.rate_bps, saturated.rate_bps);
    }

    #[test]
    fn back_at_line_rate_the_limiter_and_tag_go() {
        let mut r = rp();
        r.on_bcn(0, &bcn(7, -10, false)).unwrap();
        let c = r.on_bcn(1, &bcn(7, 1875, false)).unwrap();
        assert_eq!(c.rate_bps, 10e9);
        assert!(!c.limited);
        assert_eq!(c.rlt_cpid, None);
    }

    #[test]
    fn bad_gains_are_refused() {
        let mut c = RpConfig::seed_003(10e9, 1e7);
        c.gd_per_page = 0.53; // seed 001's listing: 0.53 × 1875 ≫ 1
        assert!(ReactionPoint::new(c).is_err());
        assert!(ReactionPoint::new(RpConfig::seed_003(10e9, 0.0)).is_err());
    }

    #[test]
    fn parses_the_p4_programs_bcn_frame() {
        let mut f = vec![0u8; 12];
        f.extend_from_slice(&ETHERTYPE_BCN.to_be_bytes());
        f.push(0x01); // version 0, severe
        f.push(0);
        f.extend_from_slice(&0x0000_0001_0005_0000u64.to_be_bytes());
        f.extend_from_slice(&(-3i16).to_be_bytes());
        f.extend_from_slice(&4i16.to_be_bytes());
        f.extend_from_slice(&(-5i32).to_be_bytes());
        // A timestamp whose low half reads as a small length: the sample length is the
        // field after it.
        f.extend_from_slice(&0x0004_0001u32.to_be_bytes());
        f.extend_from_slice(&3u16.to_be_bytes());
        f.extend_from_slice(&[9, 8, 7, 6, 5]);
        let b = parse_bcn(&f).unwrap();
        assert_eq!(
            (b.cpid, b.qoff_pages, b.qdelta_pages, b.fb_pages),
            (0x1_0005_0000, -3, 4, -5)
        );
        assert!(b.severe);
        assert_eq!(b.timestamp_us, 0x0004_0001);
        assert_eq!(b.sample(&f), &[9, 8, 7]);
        f[14] = 0x10; // version 1
        assert_eq!(parse_bcn(&f), None);
        assert_eq!(parse_bcn(&f[..20]), None);
    }
}
