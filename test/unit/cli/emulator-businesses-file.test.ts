import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CliError } from '../../../src/cli/cli-error.js';
import { loadBusinessesFile } from '../../../src/cli/emulator-businesses-file.js';

describe('--businesses FILE (issue 26, item 5)', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'emulator-businesses-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const write = async (name: string, text: string) => {
    const file = join(dir, name);
    await writeFile(file, text);
    return file;
  };

  it('reads YAML: every field, secrets from the environment, seeds relative to the file', async () => {
    const file = await write(
      'ok.yaml',
      [
        'businesses:',
        '  - id: toko-a',
        '    secret: ${TOKO_A_SECRET}',
        '    name: Toko A',
        '    webhook_url: http://127.0.0.1:8080/webhooks/toko-a',
        '    webhook_secret: wh-a',
        '    handover_webhook_url: http://127.0.0.1:8080/handover/toko-a',
        '    api_feature: false',
        '    seed: seeds/a.yaml',
        '  - {id: toko-b, secret: sk-b}',
        '',
      ].join('\n'),
    );
    const businesses = await loadBusinessesFile(file, { TOKO_A_SECRET: 'sk-a' });
    expect(businesses).toEqual([
      {
        where: `${file}:2:5`,
        options: {
          businessId: 'toko-a',
          secret: 'sk-a',
          businessName: 'Toko A',
          webhook: { url: 'http://127.0.0.1:8080/webhooks/toko-a', secret: 'wh-a' },
          handoverWebhook: { url: 'http://127.0.0.1:8080/handover/toko-a' },
          apiFeature: false,
          seedFile: join(dir, 'seeds/a.yaml'),
        },
      },
      { where: `${file}:10:5`, options: { businessId: 'toko-b', secret: 'sk-b' } },
    ]);
  });

  it('reads JSON', async () => {
    const file = await write('ok.json', '{"businesses": [{"id": "toko-j", "secret": "sk-j"}]}');
    expect((await loadBusinessesFile(file, {})).map((b) => b.options.businessId)).toEqual(['toko-j']);
  });

  it.each([
    ['empty.yaml', '', 'empty.yaml:1:1: the file is empty: write a businesses: list'],
    ['list.yaml', '- id: a\n  secret: s\n', 'list.yaml:1:1: Invalid input: expected object, received array'],
    ['none.yaml', 'businesses: []\n', 'none.yaml:1:13: businesses: list at least one business'],
    [
      'typo.yaml',
      'businesses:\n  - id: a\n    secret: s\n    webhok_url: http://x\n',
      'typo.yaml:4:5: unknown key "webhok_url"',
    ],
    ['nosecret.yaml', 'businesses:\n  - id: a\n', 'nosecret.yaml:2:5: secret is missing'],
    [
      'url.yaml',
      'businesses:\n  - id: a\n    secret: s\n    webhook_url: ftp://x\n',
      'url.yaml:4:18: webhook_url: must be an http(s) URL',
    ],
    [
      'whsecret.yaml',
      'businesses:\n  - id: a\n    secret: s\n    webhook_secret: w\n',
      'whsecret.yaml:4:21: webhook_secret: webhook_secret needs webhook_url',
    ],
    [
      'env.yaml',
      'businesses:\n  - id: a\n    secret: ${NOT_SET_ANYWHERE}\n',
      'env.yaml:3:13: ${NOT_SET_ANYWHERE} is not set: export NOT_SET_ANYWHERE',
    ],
    ['tag.yaml', 'businesses:\n  - id: a\n    secret: !!str s\n', 'tag.yaml:3:19: YAML tags are not allowed'],
    [
      'dup.yaml',
      'businesses:\n  - id: a\n    secret: s\n    secret: t\n',
      'dup.yaml:4:5: YAML syntax error (duplicate key)',
    ],
    [
      'bad.yaml',
      'businesses:\n  - id: a\n    secret: "hunter2\n',
      'bad.yaml:4:1: YAML syntax error (missing char)',
    ],
  ])('refuses %s with file:line:column and no secret', async (name, text, message) => {
    const file = await write(name, text);
    let thrown: unknown;
    try {
      await loadBusinessesFile(file, {});
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(CliError);
    const shown = (thrown as CliError).message;
    expect(shown).toContain(`--businesses file ${file} is invalid`);
    expect(shown).toContain(join(dir, message));
    expect(shown).not.toContain('hunter2');
  });

  it('says when the file cannot be read', async () => {
    await expect(loadBusinessesFile(join(dir, 'missing.yaml'))).rejects.toThrow(
      `cannot read --businesses file ${join(dir, 'missing.yaml')} (ENOENT): check the path`,
    );
  });
});
