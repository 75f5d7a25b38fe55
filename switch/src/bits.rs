//! Bit-level helpers: masks, sign extension, big-endian bit reading,
//! sequential bit writing/reading, and BMv2 `hexstr` parsing. Values are
//! `u128` in two's complement.

/// [`mask`] of each width 0..=128: a load instead of a 128-bit shift, which
/// takes a dozen instructions and branches (masks are taken several times per
/// field a packet moves).
const MASKS: [u128; 129] = {
    let mut masks = [0u128; 129];
    let mut width = 1;
    while width <= 128 {
        masks[width] = u128::MAX >> (128 - width);
        width += 1;
    }
    masks
};

/// Mask with the low `width` bits set (all ones for width >= 128).
#[inline]
pub fn mask(width: u32) -> u128 {
    MASKS[width.min(128) as usize]
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

/// Whether a field at bit `offset` of `width` bits lies within the 8 bytes
/// from its first byte, so one 8-byte load reads it ([`get_window`]): most
/// header fields, aligned or not.
#[inline]
pub fn fits_window(offset: u32, width: u32) -> bool {
    width >= 1 && offset % 8 + width <= 64
}

/// Reads a field that [`fits_window`] with one 8-byte big-endian load; None
/// when fewer than 8 bytes follow its first byte in `buf` (then [`get_bits`]
/// reads it).
#[inline]
pub fn get_window(buf: &[u8], offset: usize, width: u32) -> Option<u64> {
    let bytes: [u8; 8] = buf.get(offset / 8..offset / 8 + 8)?.try_into().ok()?;
    Some((u64::from_be_bytes(bytes) << (offset % 8)) >> (64 - width))
}

/// Writes the low `width` bits of `v` as a field of whole bytes (`width` a
/// multiple of 8, 8..=64) at bit `offset` (a multiple of 8) with one 8-byte
/// store: the bytes after the field become zero, so fields must be written
/// in increasing offset order into a zeroed buffer with 8 bytes to spare.
/// (A store, not a read-modify-write: a load of bytes the previous field's
/// store just wrote, at another offset, stalls the CPU's store forwarding.)
#[inline]
pub fn put_byte_field(buf: &mut [u8], offset: usize, width: u32, v: u64) {
    if let Some(window) = buf.get_mut(offset / 8..offset / 8 + 8) {
        window.copy_from_slice(&(v << (64 - width)).to_be_bytes());
    }
}

/// Whether a field at bit `offset` of `width` bits is whole bytes of at most 64
/// bits ([`put_byte_field`]).
#[inline]
pub fn is_byte_field(offset: u32, width: u32) -> bool {
    offset.is_multiple_of(8) && width.is_multiple_of(8) && (8..=64).contains(&width)
}

/// Reads `width` (<= 128) bits starting at bit `offset` (MSB first) from
/// `buf`; callers check the field lies inside `buf`.
#[inline]
pub fn get_bits(buf: &[u8], offset: usize, width: u32) -> u128 {
    if width == 0 {
        return 0;
    }
    let start = offset / 8;
    let skip = (offset % 8) as u32;
    if skip + width <= 128 {
        // The field lies within the 16 bytes from its first byte: one
        // big-endian load (zero-padded past the end of `buf`), a shift, a mask.
        let mut window = [0u8; 16];
        match buf.get(start..start + 16) {
            Some(bytes) => window.copy_from_slice(bytes),
            None => {
                let tail = buf.get(start..).unwrap_or(&[]);
                window[..tail.len()].copy_from_slice(tail);
            }
        }
        return (u128::from_be_bytes(window) >> (128 - skip - width)) & mask(width);
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

/// ORs the low `width` bits of `v` into `buf` at bit `offset` (MSB first);
/// the field must lie within the 16 bytes from its first byte, and those 16
/// bytes within `buf`.
#[inline]
pub fn put_bits(buf: &mut [u8], offset: usize, width: u32, v: u128) {
    let start = offset / 8;
    let skip = (offset % 8) as u32;
    let Some(window) = buf.get_mut(start..start + 16) else {
        return;
    };
    let Some(shift) = 128u32.checked_sub(skip + width) else {
        return;
    };
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(window);
    let placed = (v & mask(width)).checked_shl(shift).unwrap_or(0);
    window.copy_from_slice(&(u128::from_be_bytes(bytes) | placed).to_be_bytes());
}

/// Appends bit fields MSB-first to a byte vector, a byte at a time, so
/// sequential writes (deparsing, hash inputs) need no read-modify-write.
pub struct BitWriter<'a> {
    buf: &'a mut Vec<u8>,
    acc: u64,
    pending: u32,
}

impl<'a> BitWriter<'a> {
    /// A writer appending to `buf` (which must end on a byte boundary).
    #[inline]
    pub fn new(buf: &'a mut Vec<u8>) -> Self {
        BitWriter {
            buf,
            acc: 0,
            pending: 0,
        }
    }

    /// Appends the low `width` bits of `v`.
    #[inline]
    pub fn push(&mut self, width: u32, v: u128) {
        if self.pending == 0 && width.is_multiple_of(8) {
            // Byte-aligned whole bytes, the common case for header fields:
            // a fixed 16-byte copy then a cut, cheaper than a copy of
            // variable length.
            let bytes = (width / 8).min(16) as usize;
            let len = self.buf.len();
            let top = v.checked_shl(128 - 8 * bytes as u32).unwrap_or(0);
            self.buf.extend_from_slice(&top.to_be_bytes());
            self.buf.truncate(len + bytes);
            return;
        }
        let mut w = width;
        while w > 0 {
            let take = w.min(32);
            let chunk = ((v >> (w - take)) as u64) & ((1u64 << take) - 1);
            self.acc = (self.acc << take) | chunk;
            self.pending += take;
            while self.pending >= 8 {
                self.pending -= 8;
                self.buf.push((self.acc >> self.pending) as u8);
            }
            self.acc &= (1u64 << self.pending) - 1;
            w -= take;
        }
    }

    /// Appends `bytes` bytes that `fill` assembles (with [`put_bits`]) in a
    /// zeroed buffer with 16 bytes to spare past them; false, appending
    /// nothing, when the writer is not on a byte boundary.
    #[inline]
    pub fn push_packed(&mut self, bytes: usize, fill: impl FnOnce(&mut [u8])) -> bool {
        if self.pending != 0 {
            return false;
        }
        let len = self.buf.len();
        self.buf.resize(len + bytes + 16, 0);
        fill(&mut self.buf[len..]);
        self.buf.truncate(len + bytes);
        true
    }

    /// Appends whole bytes (the writer must be on a byte boundary to copy them
    /// directly; otherwise they are shifted in bit by bit).
    #[inline]
    pub fn push_bytes(&mut self, bytes: &[u8]) {
        if self.pending == 0 {
            self.buf.extend_from_slice(bytes);
        } else {
            for b in bytes {
                self.push(8, u128::from(*b));
            }
        }
    }

    /// Pads the last partial byte with zeros.
    #[inline]
    pub fn finish(&mut self) {
        if self.pending > 0 {
            self.buf.push((self.acc << (8 - self.pending)) as u8);
            self.acc = 0;
            self.pending = 0;
        }
    }
}

/// Reads bit fields MSB-first from a byte slice, sequentially.
pub struct BitReader<'a> {
    data: &'a [u8],
    pos: usize,
    acc: u64,
    avail: u32,
}

impl<'a> BitReader<'a> {
    /// A reader starting at byte `start` of `data`; the caller checks the length.
    #[inline]
    pub fn new(data: &'a [u8], start: usize) -> Self {
        BitReader {
            data,
            pos: start,
            acc: 0,
            avail: 0,
        }
    }

    /// Reads the next `width` bits.
    #[inline]
    pub fn read(&mut self, width: u32) -> u128 {
        let mut out = 0u128;
        let mut w = width;
        while w > 0 {
            let take = w.min(32);
            while self.avail < take {
                self.acc = (self.acc << 8) | u64::from(self.data[self.pos]);
                self.pos += 1;
                self.avail += 8;
            }
            self.avail -= take;
            let chunk = (self.acc >> self.avail) & ((1u64 << take) - 1);
            self.acc &= (1u64 << self.avail) - 1;
            out = (out << take) | u128::from(chunk);
            w -= take;
        }
        out
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
    fn masks_have_the_low_width_bits_set() {
        assert_eq!(mask(0), 0);
        assert_eq!(mask(1), 1);
        assert_eq!(mask(9), 0x1ff);
        assert_eq!(mask(64), u128::from(u64::MAX));
        assert_eq!(mask(127), u128::MAX >> 1);
        assert_eq!(mask(128), u128::MAX);
        assert_eq!(mask(1000), u128::MAX);
        for width in 0..128 {
            assert_eq!(mask(width), (1u128 << width) - 1, "width {width}");
        }
    }

    #[test]
    fn window_and_byte_fields_read_and_write_as_the_bit_helpers_do() {
        let frame: Vec<u8> = (0u8..40).map(|b| b.wrapping_mul(37)).collect();
        let fields = [
            (0, 8),
            (8, 16),
            (16, 48),
            (64, 32),
            (96, 64),
            (256, 8),
            (3, 9),
            (100, 4),
            (107, 57),
            (161, 1),
            (200, 13),
        ];
        for (offset, width) in fields {
            assert!(fits_window(offset as u32, width), "{offset} {width}");
            let want = get_bits(&frame, offset, width);
            assert_eq!(
                get_window(&frame, offset, width).map(u128::from),
                Some(want),
                "offset {offset} width {width}"
            );
            if is_byte_field(offset as u32, width) {
                let mut a = vec![0u8; 48];
                let mut b = vec![0u8; 48];
                put_bits(&mut a, offset, width, want);
                put_byte_field(&mut b, offset, width, want as u64);
                assert_eq!(a, b, "offset {offset} width {width}");
            }
        }
        // Fewer than 8 bytes after the field's first byte: the caller falls back to get_bits.
        assert_eq!(get_window(&frame, 34 * 8, 16), None);
        assert!(fits_window(7, 57) && !fits_window(7, 58) && !fits_window(0, 65));
        assert!(!fits_window(0, 0) && fits_window(0, 64) && !fits_window(1, 64));
        assert!(is_byte_field(16, 48) && !is_byte_field(4, 8) && !is_byte_field(8, 12));
        assert!(!is_byte_field(0, 72) && !is_byte_field(0, 0));
    }

    #[test]
    fn unaligned_read() {
        let buf = [0x1a, 0x5f, 0, 0];
        assert_eq!(get_bits(&buf, 3, 9), 0x1a5);
        assert_eq!(get_bits(&buf, 12, 4), 0xf);
    }

    #[test]
    fn every_offset_and_width_matches_a_bit_by_bit_read() {
        let buf: Vec<u8> = (0..40u32).map(|i| (i * 37 + 11) as u8).collect();
        let bit = |i: usize| u128::from((buf[i / 8] >> (7 - i % 8)) & 1);
        for offset in 0..(40 * 8) {
            for width in 1..=128u32 {
                if offset + width as usize > buf.len() * 8 {
                    break;
                }
                let want = (offset..offset + width as usize).fold(0u128, |v, i| (v << 1) | bit(i));
                assert_eq!(
                    get_bits(&buf, offset, width),
                    want,
                    "offset {offset} width {width}"
                );
            }
        }
    }

    #[test]
    fn writer_and_reader_agree_with_get_bits() {
        let widths = [4u32, 4, 8, 16, 3, 13, 1, 7, 48, 128, 5, 3];
        let values: Vec<u128> = widths
            .iter()
            .enumerate()
            .map(|(i, w)| {
                (0x0123_4567_89ab_cdef_fedc_ba98_7654_3210u128.rotate_left(i as u32 * 7)) & mask(*w)
            })
            .collect();
        let mut out = Vec::new();
        let mut w = BitWriter::new(&mut out);
        for (width, v) in widths.iter().zip(&values) {
            w.push(*width, *v);
        }
        w.finish();
        let total: u32 = widths.iter().sum();
        assert_eq!(out.len(), total.div_ceil(8) as usize);
        let mut r = BitReader::new(&out, 0);
        let mut at = 0usize;
        for (width, v) in widths.iter().zip(&values) {
            assert_eq!(get_bits(&out, at, *width), *v);
            assert_eq!(r.read(*width), *v);
            at += *width as usize;
        }
    }

    #[test]
    fn packed_fields_match_the_bit_writer() {
        let widths = [4u32, 4, 8, 16, 3, 13, 1, 7, 48, 120, 8];
        let values: Vec<u128> = widths
            .iter()
            .enumerate()
            .map(|(i, w)| {
                0xfedc_ba98_7654_3210_0123_4567_89ab_cdefu128.rotate_left(i as u32 * 11) & mask(*w)
            })
            .collect();
        let mut want = vec![0xaa];
        let mut w = BitWriter::new(&mut want);
        for (width, v) in widths.iter().zip(&values) {
            w.push(*width, *v);
        }
        w.finish();
        let mut got = vec![0xaa];
        let mut w = BitWriter::new(&mut got);
        let total: u32 = widths.iter().sum();
        assert!(w.push_packed(total as usize / 8, |buf| {
            let mut at = 0;
            for (width, v) in widths.iter().zip(&values) {
                // Bits above the width are not the field's: they must not leak.
                put_bits(buf, at, *width, *v | (1 << 127));
                at += *width as usize;
            }
        }));
        assert_eq!(got, want);
        let mut unaligned = vec![];
        let mut w = BitWriter::new(&mut unaligned);
        w.push(3, 1);
        assert!(!w.push_packed(2, |_| {}));
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
