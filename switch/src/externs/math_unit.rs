//! Tofino's `MathUnit`: the stateful ALU's table-driven approximation of
//! `factor·f(x)` for f = x, x², √x, 1/x, 1/x², 1/√x, as the hardware computes it.
//! The input is split into a 4-bit mantissa (its most significant set bit and the
//! three below) and an exponent; a 16-entry table of 8-bit values, indexed by the
//! mantissa, gives f of the mantissa times the factor, and the output is that
//! entry shifted by the exponent (doubled for x², halved for √x, negated for the
//! inverses) plus a scale. For √x an odd exponent is made even by taking a 3-bit
//! mantissa (entries 4 to 7), which is why the compiler fills those for √x only.
//!
//! The table is built from `MathUnit(op, factor)` / `MathUnit(op, A, B)` (factor
//! A/B) as the compiler builds it: the largest scale that keeps every entry below
//! 256, entries rounded to the nearest integer (ties to even).

/// The function a math unit approximates (`MathOp_t`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MathOp {
    /// x
    Mul,
    /// x²
    Sqr,
    /// √x
    Sqrt,
    /// 1/x
    Div,
    /// 1/x²
    Rsqr,
    /// 1/√x
    Rsqrt,
}

impl MathOp {
    /// The operation `MathOp_t` names `name`.
    pub fn from_name(name: &str) -> Option<MathOp> {
        Some(match name {
            "MUL" => MathOp::Mul,
            "SQR" => MathOp::Sqr,
            "SQRT" => MathOp::Sqrt,
            "DIV" => MathOp::Div,
            "RSQR" => MathOp::Rsqr,
            "RSQRT" => MathOp::Rsqrt,
            _ => return None,
        })
    }

    /// (invert, exponent shift) of the hardware unit.
    fn shape(self) -> (bool, i32) {
        match self {
            MathOp::Mul => (false, 0),
            MathOp::Sqr => (false, 1),
            MathOp::Sqrt => (false, -1),
            MathOp::Div => (true, 0),
            MathOp::Rsqr => (true, 1),
            MathOp::Rsqrt => (true, -1),
        }
    }

    fn f(self, x: f64) -> f64 {
        match self {
            MathOp::Mul => x,
            MathOp::Sqr => x * x,
            MathOp::Sqrt => x.sqrt(),
            MathOp::Div => 1.0 / x,
            MathOp::Rsqr => 1.0 / (x * x),
            MathOp::Rsqrt => 1.0 / x.sqrt(),
        }
    }
}

/// A math unit as the hardware holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MathUnitDef {
    /// Control-plane name.
    pub name: String,
    /// The exponent is negated (1/x forms).
    pub invert: bool,
    /// The exponent is doubled (1), kept (0) or halved (-1).
    pub shift: i32,
    /// Added to the output exponent.
    pub scale: i32,
    /// f(i/8)·factor·2^-scale for each mantissa i.
    pub table: [u8; 16],
}

impl MathUnitDef {
    /// The unit for `op` and `factor`, its table filled as the compiler fills it.
    pub fn new(name: String, op: MathOp, factor: f64) -> Result<MathUnitDef, String> {
        if !factor.is_finite() || factor <= 0.0 {
            return Err(format!("factor {factor} is not a positive number"));
        }
        let (invert, shift) = op.shape();
        let first: u8 = if shift >= 0 { 8 } else { 4 };
        let max = (first..16)
            .map(|i| op.f(f64::from(i) / 8.0))
            .fold(0.0f64, f64::max);
        let scale = ((factor * max).log2().floor() as i32 - 7).clamp(-32, 31);
        let k = factor * 2f64.powi(-scale);
        let mut table = [0u8; 16];
        for (i, t) in table.iter_mut().enumerate().skip(usize::from(first)) {
            *t = (op.f(i as f64 / 8.0) * k)
                .round_ties_even()
                .clamp(0.0, 255.0) as u8;
        }
        Ok(MathUnitDef {
            name,
            invert,
            shift,
            scale,
            table,
        })
    }

    /// The unit's output for `x` (0 for 0).
    pub fn execute(&self, x: u128) -> u128 {
        if x == 0 {
            return 0;
        }
        let msb = 127 - x.leading_zeros() as i32;
        // The top `bits` bits of x, read as a mantissa in eighths.
        let window = |bits: i32| -> usize {
            let drop = msb - (bits - 1);
            (if drop >= 0 { x >> drop } else { x << -drop }) as usize & 0xf
        };
        let (index, exp) = if self.shift < 0 && msb % 2 == 1 {
            (window(3), msb + 1)
        } else {
            (window(4), msb)
        };
        let exp = match self.shift {
            1 => 2 * exp,
            -1 => exp / 2,
            _ => exp,
        };
        let exp = if self.invert { -exp } else { exp } + self.scale;
        let v = u128::from(self.table[index]);
        match exp {
            e if e >= 128 => 0,
            e if e >= 0 => v << e,
            e if e > -128 => v >> -e,
            _ => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(op: MathOp, factor: f64) -> MathUnitDef {
        MathUnitDef::new("m".into(), op, factor).expect("valid")
    }

    #[test]
    fn the_table_is_the_compilers() {
        // MUL by 3: max 3·15/8 = 5.625 → scale 2 - 7 = -5, entries i/8·96.
        let m = unit(MathOp::Mul, 3.0);
        assert_eq!(m.scale, -5);
        assert_eq!(&m.table[8..], &[96, 108, 120, 132, 144, 156, 168, 180]);
        assert_eq!(&m.table[..8], &[0; 8]);
        // SQRT: entries 4..15 are √(i/8)·128.
        let s = unit(MathOp::Sqrt, 1.0);
        assert_eq!(s.scale, -7);
        assert_eq!(s.table[4], 91);
        assert_eq!(s.table[8], 128);
    }

    #[test]
    fn products_are_exact_where_the_mantissa_holds_the_input() {
        let m = unit(MathOp::Mul, 3.0);
        for x in 1..16u128 {
            assert_eq!(m.execute(x), 3 * x, "3·{x}");
        }
        // 100 = 0b1100100: the mantissa keeps 1100, so 3·96 = 288, not 300.
        assert_eq!(m.execute(100), 288);
        assert_eq!(m.execute(0), 0);
    }

    #[test]
    fn division_and_roots_approximate() {
        let d = unit(MathOp::Div, 1000.0);
        assert_eq!(d.scale, 2);
        assert_eq!(d.execute(10), 100);
        assert_eq!(d.execute(100), 10);
        let s = unit(MathOp::Sqrt, 1.0);
        assert_eq!(s.execute(16), 4);
        assert_eq!(s.execute(64), 8);
        assert_eq!(
            s.execute(32),
            5,
            "√32 = 5.66 from entry 4 (√0.5·128 = 91) >> 4"
        );
        let q = unit(MathOp::Sqr, 1.0);
        assert_eq!(q.execute(12), 144);
        let r = unit(MathOp::Rsqrt, 4096.0);
        assert_eq!(r.execute(16), 1024);
    }

    #[test]
    fn a_bad_factor_is_refused() {
        assert!(MathUnitDef::new("m".into(), MathOp::Mul, 0.0).is_err());
        assert!(MathOp::from_name("LOG").is_none());
    }
}
