/**
 * What a bridge says about a conversation's clocks: its pending timers and when it
 * thinks the reply window closes. A structural shape of the emulator's own: it imports nothing
 * from the bridge. The caller of startEmulator supplies them (option `clocks`; the CLI's
 * --clocks-config reads the bridge's Redis) and the inbox page shows them.
 */
export interface InboxClocks {
  readonly timers: readonly {
    readonly rule: string;
    readonly trigger: string;
    readonly dueAt: string;
    readonly dueLocal: string | null;
    readonly state: string;
  }[];
  readonly window: {
    readonly applies: boolean;
    readonly closesAt: string | null;
    readonly closesLocal: string | null;
  };
}
