//! Bit-level helpers: masks, sign extension, big-endian bit packing into byte
//! buffers, and BMv2 `hexstr` parsing. Values are `u128` in two's complement.

/// Mask with the low `width` bits set (all ones for width >= 128).
#[inline]
pub fn mask(width: u32) -> u128 {
    if width >= 128 {
        u128::MAX
    } else {
        (1u128 << width) - 1
    }
}

/// Sign-extends the low `width` bits of `v` to 128 bits.
#[inline]
pub fn sign_extend(v: u128, width: u32) -> u128 {
    if width == 0 || width >= 128 {
        return v;
    }
    let shift = 128 - width;
    (((v << shift) as i128) >> shift) as u128
}

/// Reads `width` (<= 128) bits starting at bit `offset` (MSB first) from `buf`.
#[inline]
pub fn get_bits(buf: &[u8], offset: usize, width: u32) -> u128 {
    if width == 0 {
        return 0;
    }
    if offset.is_multiple_of(8) && width.is_multiple_of(8) {
        // Byte-aligned fields (most header fields) take the fast path.
        let start = offset / 8;
        let mut v = 0u128;
        for b in &buf[start..start + (width / 8) as usize] {
            v = (v << 8) | u128::from(*b);
        }
        return v;
    }
    let mut v = 0u128;
    let mut bit = offset;
    let end = offset + width as usize;
    while bit < end {
        let byte = buf[bit / 8];
        let in_byte = bit % 8;
        let take = (8 - in_byte).min(end - bit);
        let chunk = (byte >> (8 - in_byte - take)) & ((1u16 << take) - 1) as u8;
        v = (v << take) | u128::from(chunk);
        bit += take;
    }
    v
}

/// Writes the low `width` bits of `v` at bit `offset` (MSB first) into `buf`.
#[inline]
pub fn put_bits(buf: &mut [u8], offset: usize, width: u32, v: u128) {
    if width == 0 {
        return;
    }
    if offset.is_multiple_of(8) && width.is_multiple_of(8) {
        let start = offset / 8;
        let n = (width / 8) as usize;
        for i in 0..n {
            buf[start + i] = (v >> (8 * (n - 1 - i))) as u8;
        }
        return;
    }
    let mut bit = offset;
    let end = offset + width as usize;
    while bit < end {
        let in_byte = bit % 8;
        let take = (8 - in_byte).min(end - bit);
        let remaining_after = (end - bit - take) as u32;
        let chunk = ((v >> remaining_after) as u8) & ((1u16 << take) - 1) as u8;
        let shift = 8 - in_byte - take;
        let m = (((1u16 << take) - 1) as u8) << shift;
        buf[bit / 8] = (buf[bit / 8] & !m) | (chunk << shift);
        bit += take;
    }
}

/// Parses a BMv2 `hexstr` ("0x1f", "-0x2", also plain decimal) into a u128
/// in two's complement; `None` if it is not a number or exceeds 128 bits.
pub fn parse_hexstr(s: &str) -> Option<u128> {
    let (neg, body) = match s.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, s),
    };
    let v = if let Some(hex) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
        let digits = hex.trim_start_matches('0');
        if digits.len() > 32 {
            return None;
        }
        if digits.is_empty() {
            if hex.is_empty() {
                return None;
            }
            0
        } else {
            u128::from_str_radix(digits, 16).ok()?
        }
    } else {
        body.parse::<u128>().ok()?
    };
    Some(if neg { v.wrapping_neg() } else { v })
}

/// Byte length of a hexstr's digits (rounded up), used to split transition keys.
pub fn hexstr_nbytes(s: &str) -> usize {
    let body = s.trim_start_matches('-');
    let digits = body
        .strip_prefix("0x")
        .or_else(|| body.strip_prefix("0X"))
        .unwrap_or(body);
    digits.len().div_ceil(2)
}

/// Big-endian bytes to a u128 (only the last 16 bytes count).
pub fn bytes_to_u128(b: &[u8]) -> u128 {
    b.iter().fold(0u128, |acc, x| (acc << 8) | u128::from(*x))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_roundtrip_unaligned() {
        let mut buf = [0u8; 4];
        put_bits(&mut buf, 3, 9, 0x1a5);
        assert_eq!(get_bits(&buf, 3, 9), 0x1a5);
        assert_eq!(buf, [0x1a, 0x50, 0, 0]);
        put_bits(&mut buf, 12, 4, 0xf);
        assert_eq!(get_bits(&buf, 3, 9), 0x1a5);
        assert_eq!(buf[1], 0x5f);
    }

    #[test]
    fn hexstr_parsing() {
        assert_eq!(parse_hexstr("0x0005"), Some(5));
        assert_eq!(parse_hexstr("-0x1"), Some(u128::MAX));
        assert_eq!(parse_hexstr("12"), Some(12));
        assert_eq!(parse_hexstr("0xzz"), None);
        assert_eq!(hexstr_nbytes("0x0aba03"), 3);
    }

    #[test]
    fn sign_extension() {
        assert_eq!(sign_extend(0xff, 8) as i128, -1);
        assert_eq!(sign_extend(0x7f, 8), 0x7f);
    }
}
