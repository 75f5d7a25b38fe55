//! Per-port capture files in the nanosecond pcap format, named as BMv2's `--pcap DIR`
//! names them: `<DIR>/<iface>_in.pcap` and `<DIR>/<iface>_out.pcap`.
//!
//! Files are written little-endian; readers (tcpdump, Wireshark, Scapy) recognise the
//! byte order and the nanosecond resolution from the magic number.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

/// Magic number of pcap files whose record timestamps are in nanoseconds.
pub const PCAP_NS_MAGIC: u32 = 0xa1b2_3c4d;
/// pcap link type of Ethernet frames (LINKTYPE_ETHERNET).
pub const LINKTYPE_ETHERNET: u32 = 1;
/// Snapshot length, bytes, that the port captures use: every frame is kept whole.
pub const SNAPLEN_BYTES: u32 = 262_144;
/// Bytes of the pcap file header.
pub const FILE_HEADER_BYTES: usize = 24;
/// Bytes of a pcap record header.
pub const RECORD_HEADER_BYTES: usize = 16;

/// The two capture files of interface `iface` in `dir`: (received, sent).
pub fn capture_paths(dir: &Path, iface: &str) -> (PathBuf, PathBuf) {
    (
        dir.join(format!("{iface}_in.pcap")),
        dir.join(format!("{iface}_out.pcap")),
    )
}

/// Writes Ethernet frames with nanosecond timestamps as a pcap stream.
pub struct PcapWriter<W: Write> {
    out: W,
    snaplen: u32,
    frames: u64,
}

impl<W: Write> PcapWriter<W> {
    /// Start a pcap stream on `out` with the given snapshot length in bytes.
    pub fn new(mut out: W, snaplen: u32) -> io::Result<Self> {
        let mut header = [0u8; FILE_HEADER_BYTES];
        header[0..4].copy_from_slice(&PCAP_NS_MAGIC.to_le_bytes());
        header[4..6].copy_from_slice(&2u16.to_le_bytes());
        header[6..8].copy_from_slice(&4u16.to_le_bytes());
        // thiszone and sigfigs (8..16) stay 0: timestamps are UTC.
        header[16..20].copy_from_slice(&snaplen.to_le_bytes());
        header[20..24].copy_from_slice(&LINKTYPE_ETHERNET.to_le_bytes());
        out.write_all(&header)?;
        Ok(PcapWriter {
            out,
            snaplen,
            frames: 0,
        })
    }

    /// Append one frame seen at `realtime_ns` (CLOCK_REALTIME ns), cut to the snapshot
    /// length; the record keeps the frame's full length.
    pub fn write_frame(&mut self, realtime_ns: u64, frame: &[u8]) -> io::Result<()> {
        let kept = frame.len().min(self.snaplen as usize);
        let mut header = [0u8; RECORD_HEADER_BYTES];
        // The format's seconds field is 32 bits: it covers times up to 2106.
        let secs = (realtime_ns / 1_000_000_000) as u32;
        let nanos = (realtime_ns % 1_000_000_000) as u32;
        header[0..4].copy_from_slice(&secs.to_le_bytes());
        header[4..8].copy_from_slice(&nanos.to_le_bytes());
        header[8..12].copy_from_slice(&(kept as u32).to_le_bytes());
        let full = u32::try_from(frame.len()).unwrap_or(u32::MAX);
        header[12..16].copy_from_slice(&full.to_le_bytes());
        self.out.write_all(&header)?;
        self.out.write_all(&frame[..kept])?;
        self.frames += 1;
        Ok(())
    }

    /// Frames written so far.
    pub fn frames(&self) -> u64 {
        self.frames
    }

    /// Push everything written so far to the underlying writer.
    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    /// The underlying writer (after a flush), e.g. to inspect an in-memory capture.
    pub fn into_inner(mut self) -> io::Result<W> {
        self.out.flush()?;
        // Drop would flush again; take the writer out without running it.
        let this = std::mem::ManuallyDrop::new(self);
        // SAFETY: `this` is never used or dropped again after its writer is moved out.
        Ok(unsafe { std::ptr::read(&this.out) })
    }
}

impl PcapWriter<BufWriter<File>> {
    /// Create (or truncate) the capture file at `path`, buffered.
    pub fn create(path: &Path) -> io::Result<Self> {
        let named = |e: io::Error| io::Error::new(e.kind(), format!("{}: {e}", path.display()));
        let file = File::create(path).map_err(named)?;
        PcapWriter::new(BufWriter::with_capacity(1 << 20, file), SNAPLEN_BYTES).map_err(named)
    }
}

impl<W: Write> Drop for PcapWriter<W> {
    fn drop(&mut self) {
        // Best effort: a shutdown must not lose buffered frames; callers that need to
        // know about a write error call `flush` themselves.
        let _ = self.out.flush();
    }
}

/// The two captures of one port, as BMv2 writes them with `--pcap DIR`.
pub struct PortCapture {
    /// Frames received on the port: `<iface>_in.pcap`.
    pub input: PcapWriter<BufWriter<File>>,
    /// Frames sent by the port: `<iface>_out.pcap`.
    pub output: PcapWriter<BufWriter<File>>,
}

impl PortCapture {
    /// Create `<dir>/<iface>_in.pcap` and `<dir>/<iface>_out.pcap`.
    pub fn create(dir: &Path, iface: &str) -> io::Result<Self> {
        let (input, output) = capture_paths(dir, iface);
        Ok(PortCapture {
            input: PcapWriter::create(&input)?,
            output: PcapWriter::create(&output)?,
        })
    }

    /// Flush both files.
    pub fn flush(&mut self) -> io::Result<()> {
        self.input.flush()?;
        self.output.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_header_is_nanosecond_ethernet_pcap() {
        let bytes = PcapWriter::new(Vec::new(), 65_535)
            .unwrap()
            .into_inner()
            .unwrap();
        assert_eq!(
            bytes,
            [
                0x4d, 0x3c, 0xb2, 0xa1, // magic, little-endian
                2, 0, 4, 0, // version 2.4
                0, 0, 0, 0, // thiszone
                0, 0, 0, 0, // sigfigs
                0xff, 0xff, 0, 0, // snaplen 65535
                1, 0, 0, 0, // LINKTYPE_ETHERNET
            ]
        );
    }

    #[test]
    fn records_carry_seconds_nanoseconds_and_lengths() {
        let mut w = PcapWriter::new(Vec::new(), 65_535).unwrap();
        w.write_frame(1_700_000_000_123_456_789, &[0xaa, 0xbb, 0xcc])
            .unwrap();
        assert_eq!(w.frames(), 1);
        let bytes = w.into_inner().unwrap();
        assert_eq!(bytes.len(), FILE_HEADER_BYTES + RECORD_HEADER_BYTES + 3);
        assert_eq!(
            bytes[FILE_HEADER_BYTES..],
            [
                0x00, 0xf1, 0x53, 0x65, // 1_700_000_000 s
                0x15, 0xcd, 0x5b, 0x07, // 123_456_789 ns
                3, 0, 0, 0, // captured length
                3, 0, 0, 0, // original length
                0xaa, 0xbb, 0xcc,
            ]
        );
    }

    #[test]
    fn frames_longer_than_the_snaplen_are_cut_but_keep_their_length() {
        let mut w = PcapWriter::new(Vec::new(), 4).unwrap();
        w.write_frame(5, &[1, 2, 3, 4, 5, 6]).unwrap();
        let bytes = w.into_inner().unwrap();
        let rec = &bytes[FILE_HEADER_BYTES..];
        assert_eq!(rec[0..8], [0, 0, 0, 0, 5, 0, 0, 0]);
        assert_eq!(rec[8..16], [4, 0, 0, 0, 6, 0, 0, 0]);
        assert_eq!(rec[16..], [1, 2, 3, 4]);
    }

    #[test]
    fn file_names_follow_bmv2() {
        let (i, o) = capture_paths(Path::new("pcaps"), "s1-eth1");
        assert_eq!(i, Path::new("pcaps/s1-eth1_in.pcap"));
        assert_eq!(o, Path::new("pcaps/s1-eth1_out.pcap"));
    }

    #[test]
    fn dropping_a_capture_flushes_it_to_disk() {
        let dir = std::env::temp_dir().join(format!("bufferlab-ports-pcap-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        {
            let mut cap = PortCapture::create(&dir, "veth9").unwrap();
            cap.input.write_frame(1, &[0u8; 60]).unwrap();
            cap.output.write_frame(2, &[1u8; 1514]).unwrap();
            cap.output.write_frame(3, &[2u8; 64]).unwrap();
        }
        let (i, o) = capture_paths(&dir, "veth9");
        let input = std::fs::read(&i).unwrap();
        let output = std::fs::read(&o).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(input.len(), FILE_HEADER_BYTES + RECORD_HEADER_BYTES + 60);
        assert_eq!(
            output.len(),
            FILE_HEADER_BYTES + 2 * RECORD_HEADER_BYTES + 1514 + 64
        );
        assert_eq!(output[FILE_HEADER_BYTES + RECORD_HEADER_BYTES], 1);
        assert_eq!(output[output.len() - 1], 2);
    }

    #[test]
    fn a_missing_directory_is_named_in_the_error() {
        let err = match PcapWriter::create(Path::new("/nonexistent-bufferlab/x_in.pcap")) {
            Ok(_) => panic!("created a file in a missing directory"),
            Err(e) => e,
        };
        assert!(err.to_string().contains("/nonexistent-bufferlab/x_in.pcap"));
    }
}
