/** Redis Cluster has 16384 hash slots (https://redis.io/docs/reference/cluster-spec/#key-distribution-model). */
export const CLUSTER_SLOTS = 16384;

const CRC16_TABLE = buildCrc16Table();

/**
 * The hash slot Redis Cluster puts a key in: CRC16 (XMODEM) of the key, or of the part between the
 * first `{` and the next `}` when that part is not empty (a hash tag), modulo 16384. The same rule
 * as the server's `CLUSTER KEYSLOT`, kept here so that tests and fault scenarios can pick keys for
 * a given shard without a round trip and without importing a client's private helper.
 */
export function keySlot(key: string | Buffer): number {
  const bytes = typeof key === 'string' ? Buffer.from(key, 'utf8') : key;
  const open = bytes.indexOf(0x7b);
  if (open !== -1) {
    const close = bytes.indexOf(0x7d, open + 1);
    if (close > open + 1) return crc16(bytes.subarray(open + 1, close)) % CLUSTER_SLOTS;
  }
  return crc16(bytes) % CLUSTER_SLOTS;
}

/** A key (`${stem}${n}`) whose slot lies in [start, end]; for probing every shard of a cluster. */
export function keyInSlotRange(start: number, end: number, stem = 'cb-slot-probe:'): string {
  for (let n = 0; n < 1_000_000; n += 1) {
    const key = `${stem}${n}`;
    const slot = keySlot(key);
    if (slot >= start && slot <= end) return key;
  }
  throw new RangeError(`no key with stem ${JSON.stringify(stem)} falls in slots ${start}-${end}`);
}

function crc16(bytes: Uint8Array): number {
  let crc = 0;
  for (const byte of bytes) {
    crc = ((crc << 8) ^ (CRC16_TABLE[((crc >> 8) ^ byte) & 0xff] ?? 0)) & 0xffff;
  }
  return crc;
}

function buildCrc16Table(): Uint16Array {
  const table = new Uint16Array(256);
  for (let i = 0; i < 256; i += 1) {
    let crc = i << 8;
    for (let bit = 0; bit < 8; bit += 1) {
      crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
    }
    table[i] = crc;
  }
  return table;
}
