//! Thin checked wrappers for the socket calls sender and receiver share.

use std::io;
use std::net::SocketAddrV4;
use std::os::fd::{AsRawFd, OwnedFd};

/// setsockopt with an integer value, naming the option in the error.
pub fn set_int(
    fd: &OwnedFd,
    level: libc::c_int,
    name: libc::c_int,
    value: libc::c_int,
    what: &str,
) -> io::Result<()> {
    // SAFETY: the option value is a valid c_int of the size passed.
    let rc = unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            level,
            name,
            (&value as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        let e = io::Error::last_os_error();
        Err(io::Error::new(e.kind(), format!("setsockopt {what}: {e}")))
    }
}

/// Raise a socket buffer to `bytes`, past the sysctl cap when running as root.
pub fn set_buffer(
    fd: &OwnedFd,
    force: libc::c_int,
    plain: libc::c_int,
    bytes: usize,
    what: &str,
) -> io::Result<()> {
    let bytes = bytes.min(libc::c_int::MAX as usize) as libc::c_int;
    set_int(fd, libc::SOL_SOCKET, force, bytes, what)
        .or_else(|_| set_int(fd, libc::SOL_SOCKET, plain, bytes, what))
}

/// An IPv4 address in the kernel's layout.
pub fn sockaddr(addr: &SocketAddrV4) -> libc::sockaddr_in {
    libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: addr.port().to_be(),
        sin_addr: libc::in_addr {
            s_addr: u32::from_ne_bytes(addr.ip().octets()),
        },
        sin_zero: [0; 8],
    }
}

/// bind(2) to `addr`, naming the address in the error.
pub fn bind(fd: &OwnedFd, addr: &SocketAddrV4) -> io::Result<()> {
    let sa = sockaddr(addr);
    // SAFETY: `sa` is a complete sockaddr_in of the length passed.
    let rc = unsafe {
        libc::bind(
            fd.as_raw_fd(),
            (&sa as *const libc::sockaddr_in).cast(),
            std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        let e = io::Error::last_os_error();
        Err(io::Error::new(e.kind(), format!("bind {addr}: {e}")))
    }
}

/// Walk the control messages of a received message, calling `f(level, type, data)` for each.
pub fn for_each_cmsg(msg: &libc::msghdr, mut f: impl FnMut(libc::c_int, libc::c_int, *const u8)) {
    // SAFETY: the kernel filled msg_control/msg_controllen; the CMSG macros stay inside it.
    unsafe {
        let mut cmsg = libc::CMSG_FIRSTHDR(msg);
        while !cmsg.is_null() {
            f((*cmsg).cmsg_level, (*cmsg).cmsg_type, libc::CMSG_DATA(cmsg));
            cmsg = libc::CMSG_NXTHDR(msg, cmsg);
        }
    }
}
