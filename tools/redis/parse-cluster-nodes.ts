/** An inclusive range of hash slots, [start, end]. */
export type SlotRange = readonly [start: number, end: number];

/** One line of `CLUSTER NODES`, as seen by one node. */
export interface ClusterNodeView {
  readonly host: string;
  readonly port: number;
  readonly id: string;
  readonly role: 'primary' | 'replica';
  /** The primary's node id, for a replica. */
  readonly primaryId: string | undefined;
  readonly flags: readonly string[];
  /** Flagged `fail` (agreed by the primaries) or `fail?` (suspected by the node asked). */
  readonly failed: boolean;
  readonly slots: readonly SlotRange[];
}

/** Parses `CLUSTER NODES` (https://redis.io/commands/cluster-nodes/). */
export function parseClusterNodes(text: string): ClusterNodeView[] {
  const views: ClusterNodeView[] = [];
  for (const line of text.split('\n')) {
    const fields = line.trim().split(' ');
    const [id, address, flagText, primaryId, , , , , ...slotFields] = fields;
    if (!id || !address || !flagText || !primaryId) continue;
    // ip:port@cport[,hostname]
    const hostPort = address.split(',')[0]?.split('@')[0] ?? '';
    const colon = hostPort.lastIndexOf(':');
    const flags = flagText.split(',');
    const slots: SlotRange[] = [];
    for (const field of slotFields) {
      if (field.startsWith('[')) continue; // a slot being migrated or imported
      const [start, end = start] = field.split('-').map(Number);
      if (start !== undefined && end !== undefined && Number.isInteger(start) && Number.isInteger(end)) {
        slots.push([start, end]);
      }
    }
    views.push({
      id,
      host: hostPort.slice(0, colon),
      port: Number(hostPort.slice(colon + 1)),
      role: flags.includes('master') ? 'primary' : 'replica',
      primaryId: primaryId === '-' ? undefined : primaryId,
      flags,
      failed: flags.includes('fail') || flags.includes('fail?'),
      slots,
    });
  }
  return views;
}
