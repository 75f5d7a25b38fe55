//! The wire after the port: holds transmitted frames until their last bit
//! reaches the peer (`Dequeued::arrival`), then hands them over in arrival
//! order across ports.
//!
//! Frames on one link never overtake each other: if the delay is lowered at
//! runtime, a frame arrives no earlier than the frame sent before it.

use std::collections::VecDeque;

use crate::calendar::Calendar;
use crate::config::NUM_PORTS;

/// Frames in flight on every port's link, earliest arrival first.
#[derive(Debug)]
pub struct DelayLine<T> {
    /// Per port, (arrival ns, item) in sending order.
    links: Vec<VecDeque<(u64, T)>>,
    /// Arrival time of each link's first frame.
    calendar: Calendar,
}

impl<T> Default for DelayLine<T> {
    /// Empty links for ports 0..=511.
    fn default() -> Self {
        DelayLine {
            links: (0..NUM_PORTS).map(|_| VecDeque::new()).collect(),
            calendar: Calendar::new(NUM_PORTS),
        }
    }
}

impl<T> DelayLine<T> {
    /// Empty links for ports 0..=511.
    pub fn new() -> Self {
        Self::default()
    }

    /// Puts a frame on `port`'s link to arrive at `arrival` ns; hands it back
    /// if the port does not exist. Returns the arrival time actually used.
    pub fn send(&mut self, port: u16, arrival: u64, item: T) -> Result<u64, T> {
        let Some(link) = self.links.get_mut(usize::from(port)) else {
            return Err(item);
        };
        let arrival = link.back().map_or(arrival, |&(last, _)| arrival.max(last));
        let was_empty = link.is_empty();
        link.push_back((arrival, item));
        if was_empty {
            self.calendar.set(port, Some(arrival));
        }
        Ok(arrival)
    }

    /// Earliest arrival (ns) of any frame in flight.
    pub fn next_arrival(&self) -> Option<u64> {
        self.calendar.peek().map(|(t, _)| t)
    }

    /// The next frame that has arrived by `now`: (port, arrival ns, item).
    pub fn receive(&mut self, now: u64) -> Option<(u16, u64, T)> {
        let (at, port) = self.calendar.peek()?;
        if at > now {
            return None;
        }
        let link = self.links.get_mut(usize::from(port))?;
        let (arrival, item) = link.pop_front()?;
        self.calendar.set(port, link.front().map(|&(t, _)| t));
        Some((port, arrival, item))
    }

    /// Frames in flight on `port`'s link (0 for a port that does not exist).
    pub fn in_flight(&self, port: u16) -> usize {
        self.links.get(usize::from(port)).map_or(0, VecDeque::len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_arrive_in_time_order_across_ports() {
        let mut line = DelayLine::new();
        assert_eq!(line.send(3, 500, 'a'), Ok(500));
        assert_eq!(line.send(1, 200, 'b'), Ok(200));
        assert_eq!(line.send(3, 700, 'c'), Ok(700));
        assert_eq!(line.send(1, 900, 'd'), Ok(900));
        assert_eq!(line.next_arrival(), Some(200));
        assert_eq!(line.receive(199), None);
        let got: Vec<_> = std::iter::from_fn(|| line.receive(1_000)).collect();
        assert_eq!(
            got,
            [(1, 200, 'b'), (3, 500, 'a'), (3, 700, 'c'), (1, 900, 'd')]
        );
        assert_eq!(line.next_arrival(), None);
    }

    #[test]
    fn a_frame_never_overtakes_the_one_before_it() {
        let mut line = DelayLine::new();
        line.send(0, 10_000, 1).expect("port exists");
        // The delay dropped: the next frame would arrive first, but it is behind on the wire.
        assert_eq!(line.send(0, 4_000, 2), Ok(10_000));
        assert_eq!(line.in_flight(0), 2);
        let got: Vec<_> = std::iter::from_fn(|| line.receive(10_000)).collect();
        assert_eq!(got, [(0, 10_000, 1), (0, 10_000, 2)]);
    }

    #[test]
    fn a_missing_port_hands_the_frame_back() {
        let mut line = DelayLine::new();
        assert_eq!(line.send(512, 0, "x"), Err("x"));
        assert_eq!(line.in_flight(512), 0);
    }
}
