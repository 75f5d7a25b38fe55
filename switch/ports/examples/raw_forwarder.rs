//! The simplest switch there is: every frame received on one interface is sent out of the
//! other, through the crate's live ports. It is the ceiling the real switch is measured
//! against (bench/ports_forwarder.py).
//!
//! ```text
//! raw_forwarder IFACE1 IFACE2 [--duration-s S] [--batch FRAMES] [--max-samples N]
//! ```
//!
//! Runs until SIGINT/SIGTERM or `--duration-s`, then prints one JSON line: frames and
//! bytes forwarded, frames/s between the first and the last forwarded batch, and the
//! added latency percentiles in µs: for each frame, CLOCK_REALTIME once its batch has been
//! handed to the outgoing interface minus the frame's kernel receive timestamp.

use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

use bufferlab_ports::{clock, LivePort, PortConfig, PortSet, RxBatch, Waker};

static STOP: AtomicBool = AtomicBool::new(false);
static WAKER: OnceLock<Waker> = OnceLock::new();

extern "C" fn on_signal(_: libc::c_int) {
    // Only an atomic store and an eventfd write: both async-signal-safe.
    STOP.store(true, Ordering::SeqCst);
    if let Some(waker) = WAKER.get() {
        waker.wake();
    }
}

struct Args {
    ifaces: [String; 2],
    duration_ns: Option<u64>,
    batch_frames: usize,
    max_samples: usize,
}

fn parse_args() -> Result<Args, String> {
    let mut ifaces = Vec::new();
    let mut duration_ns = None;
    let mut batch_frames = PortConfig::default().batch_frames;
    let mut max_samples = 4_000_000;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = |name: &str| args.next().ok_or(format!("{name} needs a value"));
        match arg.as_str() {
            "--duration-s" => {
                let s: f64 = value("--duration-s")?
                    .parse()
                    .map_err(|e| format!("--duration-s: {e}"))?;
                duration_ns = Some((s * 1e9) as u64);
            }
            "--batch" => {
                batch_frames = value("--batch")?
                    .parse()
                    .map_err(|e| format!("--batch: {e}"))?;
            }
            "--max-samples" => {
                max_samples = value("--max-samples")?
                    .parse()
                    .map_err(|e| format!("--max-samples: {e}"))?;
            }
            _ if arg.starts_with("--") => return Err(format!("unknown option {arg}")),
            _ => ifaces.push(arg),
        }
    }
    let ifaces: [String; 2] = ifaces
        .try_into()
        .map_err(|_| "give exactly two interfaces".to_string())?;
    Ok(Args {
        ifaces,
        duration_ns,
        batch_frames,
        max_samples,
    })
}

/// Forwarding totals and per-frame added latencies (ns).
struct Tally {
    frames: u64,
    bytes: u64,
    first_mono_ns: Option<u64>,
    first_batch_frames: u64,
    last_mono_ns: u64,
    latencies_ns: Vec<u64>,
    unsampled: u64,
}

impl Tally {
    fn percentile_us(sorted: &[u64], p: f64) -> Option<f64> {
        // Nearest rank: the smallest sample with at least p of the samples at or below it.
        let rank = (p * sorted.len() as f64).ceil().max(1.0) as usize;
        sorted.get(rank - 1).map(|&ns| ns as f64 / 1e3)
    }
}

/// Send every frame of `batch` out of `out`, offering the rest again while its socket
/// buffer is full (back-pressure then builds up in the receiving socket, where the kernel
/// counts drops).
fn forward(batch: &RxBatch, out: &mut LivePort, tally: &mut Tally) -> Result<(), String> {
    let mut done = 0;
    while done < batch.len() {
        done += out
            .send(batch.iter().skip(done).map(|f| f.bytes))
            .map_err(|e| e.to_string())?;
        if done < batch.len() {
            std::thread::yield_now();
        }
    }
    let now_real = clock::realtime_ns();
    let now_mono = clock::monotonic_ns();
    if tally.first_mono_ns.is_none() {
        tally.first_mono_ns = Some(now_mono);
        tally.first_batch_frames = batch.len() as u64;
    }
    tally.last_mono_ns = now_mono;
    for f in batch.iter() {
        tally.frames += 1;
        tally.bytes += f.bytes.len() as u64;
        match f.kernel_ns {
            Some(rx) if tally.latencies_ns.len() < tally.latencies_ns.capacity() => {
                tally.latencies_ns.push(now_real.saturating_sub(rx));
            }
            _ => tally.unsampled += 1,
        }
    }
    Ok(())
}

fn run(args: Args) -> Result<String, String> {
    let config = PortConfig {
        batch_frames: args.batch_frames,
        ..PortConfig::default()
    };
    let mut set = PortSet::new().map_err(|e| e.to_string())?;
    for (number, iface) in (1u32..).zip(&args.ifaces) {
        let port = LivePort::open(iface, &config).map_err(|e| e.to_string())?;
        set.add(number, port).map_err(|e| e.to_string())?;
    }
    let _ = WAKER.set(set.waker());
    for sig in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: installs a handler that only does async-signal-safe work.
        unsafe { libc::signal(sig, on_signal as *const () as libc::sighandler_t) };
    }
    let deadline = args.duration_ns.map(|d| clock::monotonic_ns() + d);
    let mut batch = set.new_batch();
    let mut tally = Tally {
        frames: 0,
        bytes: 0,
        first_mono_ns: None,
        first_batch_frames: 0,
        last_mono_ns: 0,
        latencies_ns: Vec::with_capacity(args.max_samples),
        unsampled: 0,
    };
    while !STOP.load(Ordering::SeqCst) {
        let timeout = match deadline {
            Some(d) => match d.checked_sub(clock::monotonic_ns()) {
                Some(left) if left > 0 => Some(left),
                _ => break,
            },
            None => None,
        };
        set.wait(timeout).map_err(|e| e.to_string())?;
        while let Some(port) = set.recv_next(&mut batch).map_err(|e| e.to_string())? {
            // The ports are 1 and 2: each forwards to the other.
            let out = set.port_mut(3 - port).ok_or("no output port")?;
            forward(&batch, out, &mut tally)?;
        }
    }

    let mut kernel_drops = 0;
    let (mut rx_oversize, mut tx_dropped) = (0, 0);
    for number in [1, 2] {
        let port = set.port_mut(number).ok_or("port vanished")?;
        kernel_drops += port.poll_kernel_drops().map_err(|e| e.to_string())?;
        let c = port.counters();
        rx_oversize += c.rx_oversize;
        tx_dropped += c.tx_dropped + c.tx_oversize + c.tx_runt;
    }
    let span_ns = tally
        .first_mono_ns
        .map_or(0, |first| tally.last_mono_ns - first);
    let fps = if span_ns > 0 {
        // The first batch's frames arrived before the span started.
        Some((tally.frames - tally.first_batch_frames) as f64 * 1e9 / span_ns as f64)
    } else {
        None
    };
    tally.latencies_ns.sort_unstable();
    let json_num = |v: Option<f64>| v.map_or("null".to_string(), |x| format!("{x:.3}"));
    Ok(format!(
        "{{\"forwarded_frames\": {}, \"forwarded_bytes\": {}, \"span_ns\": {}, \
         \"forwarded_fps\": {}, \"added_latency_p50_us\": {}, \"added_latency_p99_us\": {}, \
         \"latency_samples\": {}, \"unsampled_frames\": {}, \"kernel_drops\": {}, \
         \"rx_oversize\": {}, \"tx_dropped\": {}}}",
        tally.frames,
        tally.bytes,
        span_ns,
        json_num(fps),
        json_num(Tally::percentile_us(&tally.latencies_ns, 0.50)),
        json_num(Tally::percentile_us(&tally.latencies_ns, 0.99)),
        tally.latencies_ns.len(),
        tally.unsampled,
        kernel_drops,
        rx_oversize,
        tx_dropped,
    ))
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("raw_forwarder: {e}\nusage: raw_forwarder IFACE1 IFACE2 [--duration-s S] [--batch FRAMES] [--max-samples N]");
            return ExitCode::from(2);
        }
    };
    match run(args) {
        Ok(line) => {
            println!("{line}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("raw_forwarder: {e}");
            ExitCode::FAILURE
        }
    }
}
