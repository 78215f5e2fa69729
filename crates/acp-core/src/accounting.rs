//! Exact time averages of age and backlog.
//!
//! Age `Δ(t) = t − z(t)` is piecewise linear with slope 1, dropping whenever a fresher update
//! (larger generation time `z`) is received. Backlog `B(t)` is piecewise constant. Both are
//! integrated exactly, piece by piece, in integer nanoseconds: the area under the age curve is kept
//! as twice the area in ns² (an `i128`), so no rounding happens until an average is read out as a
//! float. There is no sampling grid.
//!
//! Each integral keeps a *window* (for the source: the current control epoch) that can be read and
//! restarted; reading never changes the state, so the same value can be asked for repeatedly.

use crate::time::Time;

/// Integral of the piecewise-linear age process `Δ(t) = t − z`.
///
/// Age is undefined until the first reference `z` is set; the average covers only the part of the
/// window where age was defined.
#[derive(Debug, Clone)]
pub struct AgeIntegral {
    /// Generation time (ns) of the freshest update; `None` before the first one.
    z: Option<u64>,
    /// Instant up to which `twice_area` and `defined_ns` are accumulated.
    last: Time,
    /// 2 × ∫ Δ(t) dt over the defined part of the window, in ns².
    twice_area: Wide,
    /// Length of the defined part of the window, in ns.
    defined_ns: u64,
}

/// An `i128` kept as two words, so that what holds it is aligned to 8 bytes rather than 16: the
/// monitor keeps an [`AgeIntegral`] in every session record, where the padding would cost 16
/// bytes a session (`crate::session_table`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Wide([u64; 2]);

impl Wide {
    fn get(self) -> i128 {
        (i128::from(self.0[1]) << 64) | i128::from(self.0[0])
    }

    fn of(v: i128) -> Wide {
        // The low and high 64 bits, as they are.
        Wide([v as u64, (v >> 64) as u64])
    }
}

/// Twice the area under `t − z` from `t0` to `t1` (ns²): `(t1 − z)² − (t0 − z)²`.
///
/// Both factors fit an `i128` (each is below 2⁶⁶ in magnitude), but their product does not once
/// an interval and an age both exceed about 2⁶² ns (146 years): such nonsense timestamps saturate
/// the area instead of overflowing it.
fn twice_area(z: u64, t0: Time, t1: Time) -> i128 {
    let a0 = i128::from(t0.as_nanos()) - i128::from(z);
    let a1 = i128::from(t1.as_nanos()) - i128::from(z);
    (a1 - a0).saturating_mul(a1 + a0)
}

impl AgeIntegral {
    /// An empty integral whose window opens at `start`.
    pub fn new(start: Time) -> Self {
        AgeIntegral {
            z: None,
            last: start,
            twice_area: Wide::default(),
            defined_ns: 0,
        }
    }

    fn advance(&mut self, now: Time) {
        if now <= self.last {
            return;
        }
        if let Some(z) = self.z {
            self.twice_area = Wide::of(
                self.twice_area
                    .get()
                    .saturating_add(twice_area(z, self.last, now)),
            );
            self.defined_ns += now.nanos_since(self.last);
        }
        self.last = now;
    }

    /// At `now`, the freshest update becomes one generated at `z` ns: age drops to `now − z`.
    /// The caller decides what counts as fresher (sequence order).
    pub fn reset(&mut self, now: Time, z: u64) {
        self.advance(now);
        self.z = Some(z);
    }

    /// Generation time of the current reference, if any.
    pub fn reference(&self) -> Option<u64> {
        self.z
    }

    /// Age at `now` in ns (negative only if `z` lies in the future of `now`, e.g. clock skew),
    /// saturated to the `i64` range: a generation time more than 292 years away from `now`
    /// reads as `i64::MIN` or `i64::MAX`, never wrapped around to a plausible age.
    pub fn age_at(&self, now: Time) -> Option<i64> {
        self.z.map(|z| {
            let age = i128::from(now.as_nanos()) - i128::from(z);
            i64::try_from(age).unwrap_or(if age < 0 { i64::MIN } else { i64::MAX })
        })
    }

    /// Nanoseconds of the window up to `now` during which age was defined (the span
    /// [`AgeIntegral::average`] averages over).
    pub fn defined(&self, now: Time) -> u64 {
        match (self.z, now > self.last) {
            (Some(_), true) => self.defined_ns + now.nanos_since(self.last),
            _ => self.defined_ns,
        }
    }

    /// Twice the area (ns²) and the defined length (ns) of the window up to `now`.
    fn window_to(&self, now: Time) -> (i128, u64) {
        let (mut area, mut defined) = (self.twice_area.get(), self.defined_ns);
        if let (Some(z), true) = (self.z, now > self.last) {
            area = area.saturating_add(twice_area(z, self.last, now));
            defined += now.nanos_since(self.last);
        }
        (area, defined)
    }

    /// Time-average age in seconds over the window up to `now`; `None` if age was never defined
    /// in the window.
    pub fn average(&self, now: Time) -> Option<f64> {
        let (area, defined) = self.window_to(now);
        (defined > 0).then(|| area as f64 / (2.0 * defined as f64) * 1e-9)
    }

    /// The area under the age curve over the window up to `now`, ∫ Δ(t) dt in s² (the
    /// [`AgeIntegral::average`] times the defined span); `None` if age was never defined in the
    /// window. It only grows within a window, so it can be exported as a counter whose rate over
    /// any interval is that interval's time-average age.
    pub fn area(&self, now: Time) -> Option<f64> {
        let (area, defined) = self.window_to(now);
        (defined > 0).then(|| area as f64 / 2.0 * 1e-18)
    }

    /// Closes the window at `now`, returning its average, and opens a new one (the reference
    /// `z` carries over).
    pub fn take_window(&mut self, now: Time) -> Option<f64> {
        let avg = self.average(now);
        self.advance(now);
        self.twice_area = Wide::default();
        self.defined_ns = 0;
        avg
    }
}

/// Integral of a piecewise-constant, non-negative integer process (a backlog count).
#[derive(Debug, Clone)]
pub struct StepIntegral {
    value: u64,
    last: Time,
    window_start: Time,
    /// ∫ B(t) dt over the window, in ns × count.
    area: u128,
}

impl StepIntegral {
    /// An integral of a process that is 0 from `start` on.
    pub fn new(start: Time) -> Self {
        StepIntegral {
            value: 0,
            last: start,
            window_start: start,
            area: 0,
        }
    }

    fn advance(&mut self, now: Time) {
        if now > self.last {
            self.area += u128::from(self.value) * u128::from(now.nanos_since(self.last));
            self.last = now;
        }
    }

    /// The process takes `value` from `now` on.
    pub fn set(&mut self, now: Time, value: u64) {
        self.advance(now);
        self.value = value;
    }

    /// Current value.
    pub fn value(&self) -> u64 {
        self.value
    }

    /// Time average over the window up to `now`; the current value if the window is empty.
    pub fn average(&self, now: Time) -> f64 {
        let tail = u128::from(self.value) * u128::from(now.nanos_since(self.last));
        let len = now.nanos_since(self.window_start);
        if len == 0 {
            self.value as f64
        } else {
            (self.area + tail) as f64 / len as f64
        }
    }

    /// ∫ B(t) dt over the window up to `now`, in count × s: grows with time, so its rate over any
    /// interval is that interval's time-average.
    pub fn area(&self, now: Time) -> f64 {
        let tail = u128::from(self.value) * u128::from(now.nanos_since(self.last));
        (self.area + tail) as f64 * 1e-9
    }

    /// Closes the window at `now`, returning its average, and opens a new one.
    pub fn take_window(&mut self, now: Time) -> f64 {
        let avg = self.average(now);
        self.advance(now);
        self.window_start = self.last;
        self.area = 0;
        avg
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> Time {
        Time::from_millis(x)
    }

    fn approx(a: f64, b: f64) {
        assert!((a - b).abs() < 1e-12, "{a} != {b}");
    }

    /// Paper Fig. 5: updates 1..6; update 2 is delivered after update 3 and must not reset age.
    /// Generation times a = 0, 1, 2, 4, 5, 7 ms; receptions d = 1, 4, 3, 6, 8, 9 ms.
    /// Hand computation over [1 ms, 10 ms] (age in ms):
    ///   [1,3): z=0, age 1→3: area (1+3)/2·2 = 4
    ///   [3,6): z=2 (update 2 at d=4 is out of sequence), age 1→4: area (1+4)/2·3 = 7.5
    ///   [6,8): z=4, age 2→4: area 6
    ///   [8,9): z=5, age 3→4: area 3.5
    ///   [9,10): z=7, age 2→3: area 2.5
    /// total 23.5 ms² over 9 ms → 2.6111… ms.
    #[test]
    fn fig5_out_of_sequence_update_does_not_reset_age() {
        let a = [0u64, 1, 2, 4, 5, 7];
        let d = [1u64, 4, 3, 6, 8, 9];
        let mut order: Vec<usize> = (0..6).collect();
        order.sort_by_key(|&i| d[i]);
        let mut age = AgeIntegral::new(ms(0));
        let mut freshest: Option<usize> = None;
        for i in order {
            if freshest.is_none_or(|f| i > f) {
                age.reset(ms(d[i]), a[i] * 1_000_000);
                freshest = Some(i);
            }
        }
        approx(age.average(ms(10)).unwrap(), 23.5 / 9.0 * 1e-3);
        // The area itself: 23.5 ms² = 23.5e-6 s².
        approx(age.area(ms(10)).unwrap(), 23.5e-6);
        assert_eq!(age.age_at(ms(10)), Some(3_000_000));
    }

    #[test]
    fn undefined_before_first_reset_and_windows_restart() {
        let mut age = AgeIntegral::new(ms(0));
        assert_eq!(age.average(ms(5)), None);
        assert_eq!(age.area(ms(5)), None);
        assert_eq!(age.defined(ms(5)), 0);
        age.reset(ms(2), 0); // age 2 ms at t = 2 ms
                             // Window [0, 4]: defined on [2,4], age 2→4, mean 3 ms.
        assert_eq!(age.defined(ms(4)), 2_000_000);
        approx(age.take_window(ms(4)).unwrap(), 3e-3);
        // New window [4, 6]: age 4→6, mean 5 ms.
        approx(age.average(ms(6)).unwrap(), 5e-3);
        age.reset(ms(6), Time::from_millis(6).as_nanos());
        // [4,6] mean 5, [6,8] age 0→2 mean 1 → 3 ms.
        approx(age.take_window(ms(8)).unwrap(), 3e-3);
    }

    #[test]
    fn average_does_not_mutate() {
        let mut age = AgeIntegral::new(ms(0));
        age.reset(ms(0), 0);
        let first = age.average(ms(10));
        assert_eq!(first, age.average(ms(10)));
        approx(first.unwrap(), 5e-3);
    }

    /// Backlog of Fig. 3.9 (thesis): sends at 0,1,2,4 ms raise it by one; an in-sequence ACK
    /// of update 3 at 3 ms clears 1..3; the late ACK of 2 changes nothing; ACK of 4 at 6 ms.
    /// B: [0,1)=1, [1,2)=2, [2,3)=3, [3,4)=0, [4,6)=1, [6,8)=0 → area 1+2+3+0+2+0 = 8 over 8 ms.
    #[test]
    fn backlog_sample_path() {
        let steps = [(0, 1), (1, 2), (2, 3), (3, 0), (4, 1), (6, 0)];
        let mut whole = StepIntegral::new(ms(0));
        let mut windows = StepIntegral::new(ms(0));
        for (t, v) in steps {
            whole.set(ms(t), v);
            if t == 4 {
                // Window [0, 4]: 1 + 2 + 3 + 0 = 6 over 4 ms.
                approx(windows.take_window(ms(4)), 1.5);
            }
            windows.set(ms(t), v);
        }
        approx(whole.average(ms(8)), 1.0);
        // Area 8 updates × ms.
        approx(whole.area(ms(8)), 8e-3);
        // Window [4, 8]: 2 over 4 ms.
        approx(windows.take_window(ms(8)), 0.5);
        approx(windows.average(ms(8)), 0.0);
    }

    #[test]
    fn exact_over_long_spans() {
        // 1 hour at constant age reference: mean age = 1800 s exactly.
        let mut age = AgeIntegral::new(Time::ZERO);
        age.reset(Time::ZERO, 0);
        approx(age.average(Time::from_secs(3600)).unwrap(), 1800.0);
    }
    #[test]
    fn wide_keeps_every_i128() {
        for v in [
            0,
            1,
            -1,
            i128::MAX,
            i128::MIN,
            1 << 64,
            -(1 << 64) - 1,
            0x1234 << 70,
        ] {
            assert_eq!(Wide::of(v).get(), v);
        }
        assert!(std::mem::align_of::<AgeIntegral>() <= 8);
    }

    /// Fuzzer finding (`fuzz/regressions/monitor-age-wrap`): a generation time of `u64::MAX`
    /// seen at t = 1 s is 1.8·10¹⁰ s in the future; the age used to wrap around to +1 s, which
    /// made a nonsense timestamp look fresh. It saturates now.
    #[test]
    fn ages_beyond_the_i64_range_saturate_instead_of_wrapping() {
        let mut age = AgeIntegral::new(Time::ZERO);
        age.reset(Time::from_secs(1), u64::MAX);
        assert_eq!(age.age_at(Time::from_secs(1)), Some(i64::MIN));
        age.reset(Time::MAX, 0);
        assert_eq!(age.age_at(Time::MAX), Some(i64::MAX));
        assert_eq!(age.age_at(Time::from_nanos(5)), Some(5));
    }

    /// Fuzzer finding (`fuzz/regressions/monitor-age-area-overflow`): an interval of ~2⁶³ ns
    /// with the reference ~2⁶⁴ ns away overflowed the `i128` area (a panic with overflow checks).
    /// The area saturates: the average stays finite, non-negative and huge.
    #[test]
    fn huge_spans_saturate_the_area_instead_of_overflowing() {
        let mut age = AgeIntegral::new(Time::ZERO);
        age.reset(Time::ZERO, 0);
        age.reset(Time::from_nanos(1 << 63), 0);
        let avg = age.average(Time::MAX).unwrap();
        assert!(avg.is_finite() && avg > 1e9, "{avg}");
        age.reset(Time::MAX, 0);
        assert_eq!(age.take_window(Time::MAX), Some(avg));
        // The next window starts empty, not from the saturated area.
        assert_eq!(age.average(Time::MAX), None);
    }
}
