import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { BusinessesDirListing } from '../../../src/config/businesses-dir.js';
import { ConfigError, formatConfigIssue } from '../../../src/config/config-error.js';
import { parseConfigText } from '../../../src/config/load-config.js';
import type { ShadowFileRead } from '../../../src/config/load-shadow-rules.js';

/**
 * Shadow rules (issue 28): `shadow: { rules: FILE }` names a candidate rule set, read from its own
 * file (relative to the file that names it) and checked like the config's rules, every problem at
 * its place in the candidate file. Files come from readers that hold them in memory.
 */

type Files = Record<string, string>;

const HEAD = `platform: { base_url: "https://api.example.com", auth: { business_id: b, secret: s } }
receiver: { secrets: [ w ] }
destinations: { crm: { url: "https://crm.example.com/hooks" } }
rules:
  - name: escalate
    on: message_in
    if: { text: { any_keywords: [ refund, kecewa ] } }
    then: [ { need_human: true } ]
`;

const CANDIDATE = `rules:
  - name: escalate
    on: message_in
    if: { text: { any_keywords: [ kecewa ] } }
    then: [ { need_human: true }, { forward: crm } ]
`;

function reader(files: Files, seen: string[] = []) {
  return (path: string): ShadowFileRead => {
    seen.push(path);
    const text = files[path];
    return text === undefined ? { ok: false, code: 'ENOENT' } : { ok: true, text };
  };
}

function fakeDir(dir: string, files: Files) {
  return (asked: string): BusinessesDirListing => ({
    ok: true,
    dir: asked,
    files: Object.entries(files).map(([name, text]) => ({ name, path: join(dir, name), text })),
  });
}

function load(text: string, files: Files, dir: Files = {}) {
  return parseConfigText(text, {
    fileName: join('conf', 'bridge.yaml'),
    env: { CRM: 'crm' },
    readShadowFile: reader(files),
    readBusinessesDir: fakeDir(join('conf', 'businesses'), dir),
  });
}

function problemsOf(text: string, files: Files, dir: Files = {}): string[] {
  try {
    load(text, files, dir);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    return error.issues.map(formatConfigIssue);
  }
  throw new Error('the config loaded, but it should not have');
}

const cand = (name = 'candidate.yaml') => join('conf', name);

describe('shadow: rules (issue 28)', () => {
  it('loads the candidate beside the rules, compiled with the config settings, and names the file read', () => {
    const seen: string[] = [];
    const loaded = parseConfigText(`${HEAD}shadow: { rules: candidate.yaml }\n`, {
      fileName: join('conf', 'bridge.yaml'),
      env: {},
      readShadowFile: reader({ [cand()]: CANDIDATE }, seen),
    });
    const business = loaded.businesses[0];
    expect(business?.shadow?.file).toBe(cand());
    expect(business?.shadow?.rules.rules.map((r) => r.name)).toEqual(['escalate']);
    expect(business?.shadow?.rules.rules[0]?.actions.map((a) => a.type)).toEqual(['need_human', 'forward']);
    expect(business?.rules.rules[0]?.actions.map((a) => a.type)).toEqual(['need_human']);
    expect(loaded.config.shadow).toEqual({
      rulesFile: 'candidate.yaml',
      examples: 20,
      maxAgeMs: 7 * 86_400_000,
    });
    expect(loaded.shadowFiles).toEqual([cand()]);
    expect(seen).toEqual([cand()]);
  });

  it('is off without shadow:, and takes an absolute path as it is', () => {
    const off = load(HEAD, {});
    expect(off.businesses[0]?.shadow).toBeUndefined();
    expect(off.config.shadow).toBeNull();
    expect(off.shadowFiles).toEqual([]);
    const absolute = load(`${HEAD}shadow: { rules: /etc/cb/candidate.yaml, examples: 5, max_age: 24h }\n`, {
      '/etc/cb/candidate.yaml': CANDIDATE,
    });
    expect(absolute.businesses[0]?.shadow?.file).toBe('/etc/cb/candidate.yaml');
    expect(absolute.config.shadow).toEqual({
      rulesFile: '/etc/cb/candidate.yaml',
      examples: 5,
      maxAgeMs: 86_400_000,
    });
  });

  it.each([
    [
      'a missing file, at the shadow.rules setting',
      {},
      `conf/bridge.yaml:9:18: shadow.rules: the file ${cand()} does not exist: create it with a \`rules:\` list (the candidate rules), or remove shadow:`,
    ],
    [
      'an empty file',
      { [cand()]: '' },
      `${cand()}:1:1: the shadow rules file is empty: write the candidate rules as a \`rules:\` list`,
    ],
    [
      'a list instead of a mapping',
      { [cand()]: '- name: x\n' },
      `${cand()}:1:1: a shadow rules file must be a mapping with one key, \`rules:\` (the candidate rules), got a list`,
    ],
    [
      'a setting of the config',
      { [cand()]: `timezone: Asia/Jakarta\n${CANDIDATE}` },
      `${cand()}:1:1: unknown key "timezone": a shadow rules file holds only \`rules:\`; the candidate uses the settings (timezone, business_hours, channels, reply_window, destinations) of the config that names it`,
    ],
    [
      'no rules: key',
      { [cand()]: '{}\n' },
      `${cand()}:1:1: the shadow rules file has no \`rules:\` list: write the candidate rules under \`rules:\``,
    ],
    [
      'a misspelt rules: key',
      { [cand()]: 'rule: []\n' },
      `${cand()}:1:1: unknown key "rule": did you mean "rules"?`,
    ],
    [
      'a misspelt key of a rule, with a suggestion',
      { [cand()]: CANDIDATE.replace('    if:', '    iff:') },
      `${cand()}:4:5: rules.0.iff: unknown key "iff": did you mean "if"?`,
    ],
    [
      'a template typo',
      { [cand()]: CANDIDATE.replace('{ need_human: true }, ', '{ note: "{{customer.nmae}}" }, ') },
      `${cand()}:5:21: rules.0.then.0.note: unknown template variable {{customer.nmae}}: customer has {{customer.name}}`,
    ],
    [
      'a destination the config does not have (the compiler, with the config settings)',
      { [cand()]: CANDIDATE.replace('forward: crm', 'forward: crn') },
      `${cand()}:5:46: rules.0.then.1.forward: unknown destination "crn": define it under destinations: (defined: crm)`,
    ],
    [
      'a YAML syntax error',
      { [cand()]: 'rules: [\n' },
      `${cand()}:2:1: YAML syntax error: Flow sequence in block collection must be sufficiently indented and end with a ]`,
    ],
  ] as [string, Files, string][])('refuses %s, at its place', (_what, files, problem) => {
    expect(problemsOf(`${HEAD}shadow: { rules: candidate.yaml }\n`, files)).toEqual([problem]);
  });

  it('refuses a shadow: without rules, and examples out of range, in the config', () => {
    expect(problemsOf(`${HEAD}shadow: { examples: 0 }\n`, {})).toEqual([
      'conf/bridge.yaml:9:9: shadow.rules: is required (a string)',
      'conf/bridge.yaml:9:21: shadow.examples: must be at least 1',
    ]);
  });

  it('with businesses: a business takes the top level candidate, or its own, relative to its own file', () => {
    const text = `${HEAD.replace(/^platform:.*\nreceiver:.*\n/, '')}shadow: { rules: candidate.yaml }
businesses:
  - id: toko-a
    platform: { base_url: "https://a.example.com", auth: { business_id: a, secret: sa } }
  - id: toko-b
    platform: { base_url: "https://b.example.com", auth: { business_id: b, secret: sb } }
    shadow: { rules: b-candidate.yaml }
businesses_dir: businesses
`;
    const loaded = load(
      text,
      {
        [cand()]: CANDIDATE,
        [cand('b-candidate.yaml')]: CANDIDATE.replace('[ kecewa ]', '[ marah ]'),
        [join('conf', 'businesses', 'c-candidate.yaml')]: 'rules: []\n',
      },
      {
        'toko-c.yaml':
          'platform: { base_url: "https://c.example.com", auth: { business_id: c, secret: sc } }\nshadow: { rules: c-candidate.yaml }\n',
        'toko-d.yaml':
          'platform: { base_url: "https://d.example.com", auth: { business_id: d, secret: sd } }\n',
      },
    );
    expect(loaded.businesses.map((b) => [b.id, b.shadow?.file])).toEqual([
      ['toko-a', cand()],
      ['toko-b', cand('b-candidate.yaml')],
      ['toko-c', join('conf', 'businesses', 'c-candidate.yaml')],
      ['toko-d', cand()],
    ]);
    // One compile per file and settings: the businesses that share both share the compiled rules.
    expect(loaded.businesses[0]?.shadow).toBe(loaded.businesses[3]?.shadow);
    expect(loaded.businesses[2]?.shadow?.rules.rules).toEqual([]);
    expect(loaded.shadowFiles.sort()).toEqual(
      [cand(), cand('b-candidate.yaml'), join('conf', 'businesses', 'c-candidate.yaml')].sort(),
    );
    // A problem of a shared candidate file is reported once.
    const problems = problemsOf(text.replace('businesses_dir: businesses\n', ''), {
      [cand()]: CANDIDATE.replace('    if:', '    iff:'),
      [cand('b-candidate.yaml')]: CANDIDATE,
    });
    expect(problems).toEqual([`${cand()}:4:5: rules.0.iff: unknown key "iff": did you mean "if"?`]);
  });
});
