//! Checked wrappers for the socket and interface calls a live port makes at open time.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use crate::error::{last_os, PortError};

/// Check that `iface` can be a Linux interface name and return it as an ifreq name field.
pub(crate) fn ifname(iface: &str) -> Result<[libc::c_char; libc::IFNAMSIZ], PortError> {
    let bytes = iface.as_bytes();
    if bytes.is_empty() || bytes.len() >= libc::IFNAMSIZ || bytes.contains(&0) {
        return Err(PortError::BadName {
            iface: iface.to_string(),
        });
    }
    let mut name = [0 as libc::c_char; libc::IFNAMSIZ];
    for (dst, src) in name.iter_mut().zip(bytes) {
        *dst = *src as libc::c_char;
    }
    Ok(name)
}

/// A raw AF_PACKET socket that sees no traffic until it is bound.
pub(crate) fn packet_socket(iface: &str) -> Result<OwnedFd, PortError> {
    // Protocol 0: the socket receives nothing until bind names the interface, so no frame
    // of another interface can slip in between socket() and bind().
    // SAFETY: plain socket(2) call; the result is checked before being wrapped.
    let fd = unsafe {
        libc::socket(
            libc::AF_PACKET,
            libc::SOCK_RAW | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
            0,
        )
    };
    if fd < 0 {
        return Err(last_os(iface, "socket(AF_PACKET, SOCK_RAW)"));
    }
    // SAFETY: `fd` was just returned by socket(2) and nobody else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Issue an interface ioctl (SIOCGIF*) through `fd`, in the socket's network namespace.
pub(crate) fn if_ioctl(
    fd: &OwnedFd,
    iface: &str,
    request: libc::c_ulong,
    call: &'static str,
) -> Result<libc::ifreq, PortError> {
    // SAFETY: ifreq is plain old data; all-zero is a valid value.
    let mut req: libc::ifreq = unsafe { std::mem::zeroed() };
    req.ifr_name = ifname(iface)?;
    // SAFETY: the SIOCGIF* requests read the name and write one union member of `req`.
    let rc = unsafe { libc::ioctl(fd.as_raw_fd(), request as _, &mut req) };
    if rc < 0 {
        return Err(last_os(iface, call));
    }
    Ok(req)
}

/// setsockopt with a value of type `T`, naming the option in the error.
pub(crate) fn setsockopt<T>(
    fd: &OwnedFd,
    iface: &str,
    level: libc::c_int,
    name: libc::c_int,
    value: &T,
    call: &'static str,
) -> Result<(), PortError> {
    // SAFETY: `value` points to a valid T of the size passed.
    let rc = unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            level,
            name,
            (value as *const T).cast(),
            std::mem::size_of::<T>() as libc::socklen_t,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(last_os(iface, call))
    }
}

/// Raise a socket buffer to `bytes`: past the sysctl cap when privileged, else up to it.
pub(crate) fn set_buffer(
    fd: &OwnedFd,
    iface: &str,
    force: libc::c_int,
    plain: libc::c_int,
    bytes: usize,
    call: &'static str,
) -> Result<(), PortError> {
    let bytes = bytes.min(libc::c_int::MAX as usize) as libc::c_int;
    setsockopt(fd, iface, libc::SOL_SOCKET, force, &bytes, call)
        .or_else(|_| setsockopt(fd, iface, libc::SOL_SOCKET, plain, &bytes, call))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interface_names_are_checked() {
        assert!(ifname("s1-eth1").is_ok());
        assert!(ifname("fifteen-bytes-x").is_ok());
        for bad in ["", "sixteen-bytes-xx", "a\0b"] {
            assert!(
                matches!(ifname(bad), Err(PortError::BadName { .. })),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn ifname_is_nul_terminated() {
        let name = ifname("veth0").unwrap();
        assert_eq!(
            name[..6],
            [b'v', b'e', b't', b'h', b'0', 0].map(|b| b as libc::c_char)
        );
    }
}
