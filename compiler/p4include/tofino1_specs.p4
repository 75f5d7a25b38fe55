/* bufferlab: Tofino 1 device constants for the Tofino Native Architecture.
 *
 * Widths of the identifiers the TNA blocks and externs pass around. They
 * are the hardware's widths, so a program's arithmetic on them wraps as it
 * would on the chip. Written for bufferlab from the architecture's
 * documented interface; tna.p4 includes this file, then tofino1_arch.p4. */

#ifndef BUFFERLAB_TOFINO1_SPECS
#define BUFFERLAB_TOFINO1_SPECS

#include <core.p4>

/* Device port: 2 bits of pipe, 7 bits of port within the pipe. */
#define PORT_ID_WIDTH 9
typedef bit<PORT_ID_WIDTH> PortId_t;

#define MULTICAST_GROUP_ID_WIDTH 16
typedef bit<MULTICAST_GROUP_ID_WIDTH> MulticastGroupId_t;

/* 32 queues per port on Tofino 1. */
#define QUEUE_ID_WIDTH 5
typedef bit<QUEUE_ID_WIDTH> QueueId_t;

/* Which mirror header layout (deparser field list) a mirrored copy carries. */
#define MIRROR_TYPE_WIDTH 3
typedef bit<MIRROR_TYPE_WIDTH> MirrorType_t;

/* Mirror session number (1024 sessions). */
#define MIRROR_ID_WIDTH 10
typedef bit<MIRROR_ID_WIDTH> MirrorId_t;

#define RESUBMIT_TYPE_WIDTH 3
typedef bit<RESUBMIT_TYPE_WIDTH> ResubmitType_t;

#define DIGEST_TYPE_WIDTH 3
typedef bit<DIGEST_TYPE_WIDTH> DigestType_t;

#define REPLICATION_ID_WIDTH 16
typedef bit<REPLICATION_ID_WIDTH> ReplicationId_t;

#define L1_EXCLUSION_ID_WIDTH 16
typedef bit<L1_EXCLUSION_ID_WIDTH> L1ExclusionId_t;

#define L2_EXCLUSION_ID_WIDTH 9
typedef bit<L2_EXCLUSION_ID_WIDTH> L2ExclusionId_t;

typedef error ParserError_t;

/* Bits of per-port metadata the parser finds after ingress_intrinsic_metadata_t
 * (read with port_metadata_unpack, or skipped with advance). */
const bit<32> PORT_METADATA_SIZE = 32w64;

/* Splitting a device port into its pipe and its port within the pipe. */
#define DEVPORT_PIPE_MASK 0x180
#define DEVPORT_PIPE(port) (port)[8:7]
#define DEVPORT_PORT_MASK 0x7f
#define DEVPORT_PORT(port) (port)[6:0]

#endif
