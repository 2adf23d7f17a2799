import { isIPv6 } from 'node:net';

/**
 * The address a login throttle counts by, from a socket's remote address: an IPv4 address as it
 * is (also when it arrives IPv4-mapped, `::ffff:1.2.3.4`), an IPv6 one by its /64, since one
 * machine commonly holds a whole /64 and would otherwise get a fresh allowance per address.
 */
export function clientAddress(remote: string | undefined): string {
  if (remote === undefined || remote === '') return 'unknown';
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(remote);
  if (mapped?.[1]) return mapped[1];
  if (!isIPv6(remote)) return remote;
  return `${expandIPv6(remote).slice(0, 4).join(':')}::/64`;
}

/** The eight groups of an IPv6 address, `::` filled in, without leading zeros. */
function expandIPv6(address: string): string[] {
  const [head = '', tail] = address.split('%')[0]?.split('::') ?? [];
  const parse = (part: string) => (part === '' ? [] : part.split(':'));
  const left = parse(head);
  const right = tail === undefined ? [] : parse(tail);
  const fill = Array.from({ length: Math.max(0, 8 - left.length - right.length) }, () => '0');
  return [...left, ...fill, ...right].map((group) => Number.parseInt(group, 16).toString(16));
}
