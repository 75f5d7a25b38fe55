//! Hash and checksum algorithms over byte strings, with the parameters BMv2
//! uses (`crc16` is CRC-16/ARC, `crc32` is the Ethernet CRC, `csum16` the
//! Internet checksum) plus configurable CRCs for `crc16_custom`/`crc32_custom`.

/// A CRC definition (width 8..=64), table-driven.
#[derive(Clone, Debug)]
pub struct Crc {
    width: u32,
    init: u64,
    xor_out: u64,
    reflect_in: bool,
    reflect_out: bool,
    table: [u64; 256],
}

fn reflect(v: u64, bits: u32) -> u64 {
    let mut r = 0;
    for i in 0..bits {
        if v & (1 << i) != 0 {
            r |= 1 << (bits - 1 - i);
        }
    }
    r
}

impl Crc {
    /// Builds a CRC from its polynomial, initial value, final xor and reflections.
    pub fn new(
        width: u32,
        poly: u64,
        init: u64,
        xor_out: u64,
        reflect_in: bool,
        reflect_out: bool,
    ) -> Self {
        let top = 1u64 << (width - 1);
        let wmask = if width == 64 {
            u64::MAX
        } else {
            (1u64 << width) - 1
        };
        let mut table = [0u64; 256];
        for (i, slot) in table.iter_mut().enumerate() {
            let mut rem = (i as u64) << (width - 8);
            for _ in 0..8 {
                rem = if rem & top != 0 {
                    (rem << 1) ^ poly
                } else {
                    rem << 1
                };
            }
            *slot = rem & wmask;
        }
        Crc {
            width,
            init,
            xor_out,
            reflect_in,
            reflect_out,
            table,
        }
    }

    /// CRC-16/ARC as BMv2's `crc16`.
    pub fn crc16() -> Self {
        Crc::new(16, 0x8005, 0, 0, true, true)
    }

    /// The Ethernet CRC-32 as BMv2's `crc32`.
    pub fn crc32() -> Self {
        Crc::new(32, 0x04c1_1db7, 0xffff_ffff, 0xffff_ffff, true, true)
    }

    /// CRC-16/CCITT-FALSE as BMv2's `crcCCITT`.
    pub fn ccitt() -> Self {
        Crc::new(16, 0x1021, 0xffff, 0, false, false)
    }

    /// Width in bits.
    pub fn width(&self) -> u32 {
        self.width
    }

    /// Computes the CRC of `data`.
    pub fn compute(&self, data: &[u8]) -> u64 {
        let w = self.width;
        let wmask = if w == 64 { u64::MAX } else { (1u64 << w) - 1 };
        let mut rem = self.init;
        for &b in data {
            let byte = if self.reflect_in {
                reflect(u64::from(b), 8)
            } else {
                u64::from(b)
            };
            let idx = ((byte ^ (rem >> (w - 8))) & 0xff) as usize;
            rem = (self.table[idx] ^ (rem << 8)) & wmask;
        }
        let out = if self.reflect_out {
            reflect(rem, w)
        } else {
            rem
        };
        (out ^ self.xor_out) & wmask
    }
}

/// Internet checksum (ones' complement of the ones' complement sum of
/// big-endian 16-bit words; an odd tail byte is padded with zero).
pub fn csum16(data: &[u8]) -> u64 {
    let mut sum: u64 = 0;
    let mut chunks = data.chunks_exact(2);
    for c in &mut chunks {
        sum += u64::from(u16::from_be_bytes([c[0], c[1]]));
    }
    if let [last] = chunks.remainder() {
        sum += u64::from(*last) << 8;
    }
    while sum >> 16 != 0 {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    u64::from(!(sum as u16))
}

/// XOR of big-endian 16-bit words; a short tail is padded with zeros at the end.
pub fn xor16(data: &[u8]) -> u64 {
    let mut x: u16 = 0;
    for c in data.chunks(2) {
        let hi = c[0];
        let lo = if c.len() > 1 { c[1] } else { 0 };
        x ^= u16::from_be_bytes([hi, lo]);
    }
    u64::from(x)
}

/// XOR of the bytes (TNA's `XOR8`).
pub fn xor8(data: &[u8]) -> u64 {
    u64::from(data.iter().fold(0u8, |x, b| x ^ b))
}

/// XOR of big-endian 32-bit words; a short tail is padded with zeros at the end.
pub fn xor32(data: &[u8]) -> u64 {
    let mut x: u32 = 0;
    for c in data.chunks(4) {
        let mut w = [0u8; 4];
        w[..c.len()].copy_from_slice(c);
        x ^= u32::from_be_bytes(w);
    }
    u64::from(x)
}

/// The first (up to) 8 bytes as a big-endian integer.
pub fn identity(data: &[u8]) -> u64 {
    data.iter()
        .take(8)
        .fold(0u64, |acc, b| (acc << 8) | u64::from(*b))
}

/// A small deterministic generator (xorshift64*) for `random` and
/// `modify_field_rng_uniform`, so a seeded run repeats bit for bit.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// Seeds the generator (a zero seed is remapped, xorshift needs a non-zero state).
    pub fn new(seed: u64) -> Self {
        Rng(if seed == 0 {
            0x9e37_79b9_7f4a_7c15
        } else {
            seed
        })
    }

    /// Next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Uniform value in [lo, hi] (inclusive).
    pub fn range(&mut self, lo: u128, hi: u128) -> u128 {
        let span = hi - lo;
        if span == u128::MAX {
            return (u128::from(self.next_u64()) << 64) | u128::from(self.next_u64());
        }
        let r = (u128::from(self.next_u64()) << 64) | u128::from(self.next_u64());
        lo + r % (span + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc_check_values() {
        // Standard "123456789" check values of CRC-16/ARC and CRC-32.
        assert_eq!(Crc::crc16().compute(b"123456789"), 0xbb3d);
        assert_eq!(Crc::crc32().compute(b"123456789"), 0xcbf4_3926);
    }

    #[test]
    fn internet_checksum() {
        // IPv4 header example with checksum zeroed.
        let h = [
            0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0x00, 0x00, 0xc0, 0xa8,
            0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7,
        ];
        assert_eq!(csum16(&h), 0xb861);
    }

    #[test]
    fn xor_and_identity() {
        assert_eq!(xor16(&[0x12, 0x34, 0x56]), 0x1234 ^ 0x5600);
        assert_eq!(identity(&[1, 2]), 0x0102);
        assert_eq!(xor32(&[1, 2, 3, 4, 5]), 0x0102_0304 ^ 0x0500_0000);
        assert_eq!(Crc::ccitt().compute(b"123456789"), 0x29b1);
    }
}
