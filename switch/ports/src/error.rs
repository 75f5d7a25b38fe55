//! Typed errors of live ports: each names the interface and, for OS failures, the call
//! and the OS error, so a switch that fails to start says which port and why.

use std::fmt;
use std::io;

/// Why opening, waiting on or using a live port failed.
#[derive(Debug)]
pub enum PortError {
    /// An OS call on the port's interface failed (`call` is the syscall or option).
    Os {
        iface: String,
        call: &'static str,
        source: io::Error,
    },
    /// The name cannot be a Linux interface name (empty, 16 bytes or longer, or a NUL byte).
    BadName { iface: String },
    /// Two ports of one set were given the same switch port number.
    DuplicatePort { port: u32, iface: String },
    /// An OS call of the port set itself (the wait or the wake-up handle) failed.
    Wait {
        call: &'static str,
        source: io::Error,
    },
}

impl PortError {
    /// The interface the error is about, if it concerns one.
    pub fn iface(&self) -> Option<&str> {
        match self {
            PortError::Os { iface, .. }
            | PortError::BadName { iface }
            | PortError::DuplicatePort { iface, .. } => Some(iface),
            PortError::Wait { .. } => None,
        }
    }

    /// The OS error behind the failure, if there is one.
    pub fn os_error(&self) -> Option<&io::Error> {
        match self {
            PortError::Os { source, .. } | PortError::Wait { source, .. } => Some(source),
            PortError::BadName { .. } | PortError::DuplicatePort { .. } => None,
        }
    }
}

impl fmt::Display for PortError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PortError::Os {
                iface,
                call,
                source,
            } => write!(f, "port {iface}: {call}: {source}"),
            PortError::BadName { iface } => write!(
                f,
                "port {iface:?}: not an interface name (1 to 15 bytes, no NUL)"
            ),
            PortError::DuplicatePort { port, iface } => {
                write!(f, "port {iface}: switch port number {port} is already used")
            }
            PortError::Wait { call, source } => write!(f, "port set: {call}: {source}"),
        }
    }
}

impl std::error::Error for PortError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            PortError::Os { source, .. } | PortError::Wait { source, .. } => Some(source),
            PortError::BadName { .. } | PortError::DuplicatePort { .. } => None,
        }
    }
}

/// The error of an OS call on `iface` that just failed (reads errno).
pub(crate) fn last_os(iface: &str, call: &'static str) -> PortError {
    PortError::Os {
        iface: iface.to_string(),
        call,
        source: io::Error::last_os_error(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn os_errors_name_interface_call_and_errno() {
        let err = PortError::Os {
            iface: "s1-eth1".into(),
            call: "bind",
            source: io::Error::from_raw_os_error(libc::ENODEV),
        };
        let text = err.to_string();
        assert!(text.starts_with("port s1-eth1: bind: "), "{text}");
        assert!(text.contains("os error 19"), "{text}");
        assert_eq!(err.iface(), Some("s1-eth1"));
        assert_eq!(err.os_error().and_then(io::Error::raw_os_error), Some(19));
    }

    #[test]
    fn duplicate_port_names_number_and_interface() {
        let err = PortError::DuplicatePort {
            port: 3,
            iface: "veth4".into(),
        };
        assert_eq!(
            err.to_string(),
            "port veth4: switch port number 3 is already used"
        );
    }
}
