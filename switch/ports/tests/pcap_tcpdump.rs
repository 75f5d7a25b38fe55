//! The capture files are read by tcpdump with their nanosecond timestamps (skipped with a
//! printed reason when tcpdump is not installed).

mod common;

use std::process::Command;

use bufferlab_ports::pcap::capture_paths;
use bufferlab_ports::PortCapture;
use common::frame;

#[test]
fn tcpdump_reads_the_captures_with_nanosecond_timestamps() {
    if Command::new("tcpdump").arg("--version").output().is_err() {
        eprintln!("skipped: tcpdump is not installed");
        return;
    }
    let dir = std::env::temp_dir().join(format!("bufferlab-ports-tcpdump-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    {
        let mut cap = PortCapture::create(&dir, "s1-eth1").unwrap();
        cap.input
            .write_frame(1_700_000_000_000_000_001, &frame(1, 0, 60))
            .unwrap();
        cap.input
            .write_frame(1_700_000_000_123_456_789, &frame(1, 1, 1514))
            .unwrap();
    }
    let (input, _) = capture_paths(&dir, "s1-eth1");
    let out = Command::new("tcpdump")
        .args(["-nn", "-e", "-tt", "--time-stamp-precision=nano", "-r"])
        .arg(&input)
        .output()
        .unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    // One summary line per frame; tcpdump adds indented hex lines for unknown EtherTypes.
    let lines: Vec<&str> = text.lines().filter(|l| !l.starts_with('\t')).collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert!(
        lines[0].starts_with("1700000000.000000001 02:b1:ab:00:00:01 > "),
        "{text}"
    );
    assert!(
        lines[0].contains("ethertype Unknown (0x88b5), length 60"),
        "{text}"
    );
    assert!(lines[1].starts_with("1700000000.123456789 "), "{text}");
    assert!(lines[1].contains("length 1514"), "{text}");
}
