//! TCP's 32-bit sequence space against the models' 64-bit stream offsets.
//!
//! The models count bytes of a stream from 0 (the first data byte) in `u64`, which
//! never wraps; the wire carries `ISN + 1 + offset` modulo 2³² (the SYN takes the
//! ISN itself). A received number is placed at the offset nearest a reference the
//! endpoint knows (its next expected byte), as RFC 9293's comparisons do.

/// The wire sequence number of stream offset `offset` in a stream whose SYN had `isn`.
pub fn wrap(isn: u32, offset: u64) -> u32 {
    isn.wrapping_add(1).wrapping_add(offset as u32)
}

/// The stream offset of wire number `seq` nearest `reference` (an offset); offsets
/// before the stream's start come out as 0.
pub fn unwrap(isn: u32, seq: u32, reference: u64) -> u64 {
    let delta = seq.wrapping_sub(wrap(isn, reference)) as i32;
    reference.saturating_add_signed(i64::from(delta))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_round_trip_across_the_wrap() {
        let isn = 0xffff_fff0;
        assert_eq!(wrap(isn, 0), 0xffff_fff1);
        assert_eq!(wrap(isn, 20), 5);
        assert_eq!(unwrap(isn, 5, 0), 20);
        assert_eq!(
            unwrap(isn, wrap(isn, 5_000_000_000), 4_999_000_000),
            5_000_000_000
        );
        // A number just below the reference unwraps below it.
        assert_eq!(unwrap(isn, wrap(isn, 100), 1000), 100);
        assert_eq!(
            unwrap(isn, isn, 0),
            0,
            "the SYN's own number is no data byte"
        );
    }
}
