// `npm run check:structure`: keeps the house tidy. It fails when src/
//   - has an import circle (static imports, re-exports and literal dynamic imports alike),
//   - has a file that no entry point of the package reaches (src/cli.ts, src/index.ts),
//   - has a function longer than MAX_FUNCTION_LINES lines (a factory whose body is one long
//     closure counts whole: it is several functions waiting to be named),
//   - has sub-folders of one folder (or folders of src/) that depend on each other in a circle,
//     even when no single file circle ties them (worker/processor/ <-> worker/bursts/),
//   - has an import that points against the layers (pure core <- worker/receiver <- composition
//     root <- CLI; see LAYERS below), or between folders of one layer that SAME_LAYER_IMPORTS does
//     not allow (the emulator and the platform client never import each other).
// It reads the sources with TypeScript's parser, so it needs no build. `--json` prints the
// findings as JSON (for a test or a script), `--report` also lists the longest functions.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

export const MAX_FUNCTION_LINES = 120;
// src/healthcheck.ts is the Docker image's HEALTHCHECK (Dockerfile), run as a program of its own.
export const ENTRY_POINTS = ['src/cli.ts', 'src/index.ts', 'src/healthcheck.ts'];

/**
 * The layers of src/, lowest first. A file may import from a lower layer, never from a higher one;
 * folders of one layer are siblings that import each other only where SAME_LAYER_IMPORTS says so.
 * Folders not named here are an error, so that a new folder gets a place on purpose.
 */
export const LAYERS: readonly (readonly string[])[] = [
  // Leaf helpers that import nothing of the project: the error base, durations, WIB times.
  ['base'],
  // The pure core: events, then the rules over them, then the config that holds the rules.
  ['events'],
  ['rules'],
  ['config'],
  // Edges every adapter uses: logging and tracing, the platform client, Redis connections; and the
  // emulator, the other reading of the platform's interface document beside the client.
  ['observe', 'platform', 'redis', 'emulator'],
  // The queue's key layout and jobs, then the adapters on either side of it, and the admin surface
  // (its guard, headers and bull-board) beside them.
  ['queue'],
  // The conversations' stories (what the bridge did, to whom and why): written by the worker's
  // finish step, read by the admin API, erased by privacy.
  ['story'],
  ['receive', 'worker', 'forward', 'admin'],
  // What is built on the worker's pieces: recorded events and backtests, then rule tests.
  ['record'],
  ['rules-test'],
  // Erasure of one conversation's or customer's data across every store.
  ['privacy'],
  // The operator HTTP API (/api/v1 on the admin surface): it reads and acts through the stores and
  // operations below it (dead letters, timers, quarantine, forget, stories) and is mounted by the
  // composition root; the CLI uses its console links.
  ['api'],
  // The composition root, and the demo that runs whole bridges.
  ['bridge'],
  ['demo'],
  // The command line.
  ['cli'],
];

/**
 * The imports allowed between folders of one layer (importer -> imported). Any other is refused:
 * the platform client and the emulator are two independent readings of the interface document (the
 * conformance suite between them catches a misreading only if they share none), and the receiver
 * and the worker meet only through the queue.
 */
export const SAME_LAYER_IMPORTS: Readonly<Record<string, readonly string[]>> = {
  // The client logs and traces its calls.
  platform: ['observe'],
  // Forwarding to a destination is one of the worker's actions.
  worker: ['forward'],
};

export interface Finding {
  readonly kind:
    | 'circle'
    | 'folder-circle'
    | 'unreachable'
    | 'long-function'
    | 'layer'
    | 'same-layer'
    | 'unknown-folder';
  readonly message: string;
}

export interface FunctionSpan {
  readonly file: string;
  readonly name: string;
  readonly line: number;
  readonly lines: number;
}

export interface StructureReport {
  readonly files: number;
  readonly findings: readonly Finding[];
  readonly longestFunctions: readonly FunctionSpan[];
}

function listSources(root: string): string[] {
  return readdirSync(root, { recursive: true })
    .map(String)
    .filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))
    .map((file) => path.posix.join(root, file.split(path.sep).join('/')))
    .sort();
}

function resolveImport(from: string, specifier: string, known: ReadonlySet<string>): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  const base = path.posix.normalize(path.posix.join(path.posix.dirname(from), specifier));
  const candidates = [base.replace(/\.js$/, '.ts'), `${base}.ts`, path.posix.join(base, 'index.ts')];
  return candidates.find((candidate) => known.has(candidate));
}

function importsOf(file: string, source: ts.SourceFile, known: ReadonlySet<string>): string[] {
  const found: string[] = [];
  const add = (specifier: string): void => {
    const target = resolveImport(file, specifier, known);
    if (target !== undefined) found.push(target);
  };
  const visit = (node: ts.Node): void => {
    if (
      (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
      node.moduleSpecifier !== undefined &&
      ts.isStringLiteral(node.moduleSpecifier)
    ) {
      add(node.moduleSpecifier.text);
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] !== undefined &&
      ts.isStringLiteral(node.arguments[0])
    ) {
      add(node.arguments[0].text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

function functionName(node: ts.FunctionLikeDeclaration): string {
  if (node.name !== undefined && (ts.isIdentifier(node.name) || ts.isStringLiteral(node.name))) {
    return node.name.text;
  }
  const parent = node.parent;
  if (ts.isVariableDeclaration(parent) && ts.isIdentifier(parent.name)) return parent.name.text;
  if (ts.isPropertyAssignment(parent) && ts.isIdentifier(parent.name)) return parent.name.text;
  if (ts.isCallExpression(parent)) return `callback of ${parent.expression.getText().slice(0, 40)}`;
  return '(anonymous)';
}

function functionsOf(file: string, source: ts.SourceFile): FunctionSpan[] {
  const spans: FunctionSpan[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body !== undefined) {
      const start = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const end = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      spans.push({
        file,
        name: functionName(node as ts.FunctionLikeDeclaration),
        line: start + 1,
        lines: end - start + 1,
      });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return spans;
}

/** Strongly connected components of more than one file (or a file importing itself): the circles. */
function findCircles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let index = 0;
  const indices = new Map<string, number>();
  const lowLinks = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const circles: string[][] = [];
  const connect = (file: string): void => {
    indices.set(file, index);
    lowLinks.set(file, index);
    index += 1;
    stack.push(file);
    onStack.add(file);
    for (const next of graph.get(file) ?? []) {
      if (!indices.has(next)) {
        connect(next);
        lowLinks.set(file, Math.min(lowLinks.get(file) ?? 0, lowLinks.get(next) ?? 0));
      } else if (onStack.has(next)) {
        lowLinks.set(file, Math.min(lowLinks.get(file) ?? 0, indices.get(next) ?? 0));
      }
    }
    if (lowLinks.get(file) === indices.get(file)) {
      const component: string[] = [];
      let member: string | undefined;
      do {
        member = stack.pop();
        if (member === undefined) break;
        onStack.delete(member);
        component.push(member);
      } while (member !== file);
      const selfImport = (graph.get(file) ?? []).includes(file);
      if (component.length > 1 || selfImport) circles.push(component.sort());
    }
  };
  for (const file of graph.keys()) if (!indices.has(file)) connect(file);
  return circles;
}

/** The folder of a file under src/ ('' for src/cli.ts and its siblings). */
function folderOf(root: string, file: string): string {
  const parts = path.posix.relative(root, file).split('/');
  return parts.length > 1 ? (parts[0] ?? '') : '';
}

function layerOf(folder: string): number | undefined {
  if (folder === '') return LAYERS.length; // src/cli.ts and src/index.ts sit above everything
  const layer = LAYERS.findIndex((names) => names.includes(folder));
  return layer === -1 ? undefined : layer;
}

/** The folder a file sits in, relative to root ('' for root itself), and every folder above it. */
function foldersAbove(root: string, file: string): string[] {
  const parts = path.posix.relative(root, file).split('/').slice(0, -1);
  return parts.map((_, i) => parts.slice(0, i).join('/')).concat(parts.join('/'));
}

/** The child of `folder` that holds `file` (a sub-folder, ending in '/', or the file itself), or undefined. */
function unitIn(root: string, folder: string, file: string): string | undefined {
  const relative = path.posix.relative(root, file);
  const inside =
    folder === ''
      ? relative
      : relative.startsWith(`${folder}/`)
        ? relative.slice(folder.length + 1)
        : undefined;
  if (inside === undefined) return undefined;
  const [head = '', ...rest] = inside.split('/');
  const prefix = folder === '' ? '' : `${folder}/`;
  return rest.length > 0 ? `${prefix}${head}/` : `${prefix}${head}`;
}

/**
 * Circles among the children of every folder (its sub-folders and files taken as units): the
 * folders of src/, and the sub-folders of one folder (worker/processor/ and worker/bursts/), must
 * not depend on each other both ways even when no single file circle ties them. A circle of files
 * alone is reported as an import circle already, so only circles holding a sub-folder are named,
 * each with the imports that tie it.
 */
function findFolderCircles(root: string, graph: ReadonlyMap<string, readonly string[]>): string[] {
  const folders = new Set<string>();
  for (const file of graph.keys()) for (const folder of foldersAbove(root, file)) folders.add(folder);
  const messages: string[] = [];
  for (const folder of [...folders].sort()) {
    const units = new Map<string, string[]>();
    const ties = new Map<string, string>();
    for (const [file, imports] of graph) {
      const from = unitIn(root, folder, file);
      if (from === undefined) continue;
      const targets = units.get(from) ?? [];
      units.set(from, targets);
      for (const target of imports) {
        const to = unitIn(root, folder, target);
        if (to === undefined || to === from) continue;
        if (!targets.includes(to)) targets.push(to);
        if (!ties.has(`${from}|${to}`)) ties.set(`${from}|${to}`, `${file} -> ${target}`);
      }
    }
    for (const circle of findCircles(units)) {
      if (!circle.some((unit) => unit.endsWith('/'))) continue;
      const tied = [...ties].filter(
        ([pair]) => circle.includes(pair.split('|')[0] ?? '') && circle.includes(pair.split('|')[1] ?? ''),
      );
      messages.push(
        `folders depend on each other: ${circle.join(' <-> ')} (${tied.map(([, tie]) => tie).join('; ')}): move the shared piece into a module both import, or pass the function in`,
      );
    }
  }
  return messages;
}

export function checkStructure(root = 'src'): StructureReport {
  const files = listSources(root);
  const known = new Set(files);
  const graph = new Map<string, string[]>();
  const functions: FunctionSpan[] = [];
  for (const file of files) {
    const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
    graph.set(file, importsOf(file, source, known));
    functions.push(...functionsOf(file, source));
  }
  const findings: Finding[] = [];

  for (const circle of findCircles(graph)) {
    findings.push({ kind: 'circle', message: `import circle: ${circle.join(' -> ')}` });
  }

  for (const circle of findFolderCircles(root, graph)) {
    findings.push({ kind: 'folder-circle', message: circle });
  }

  const reached = new Set<string>();
  const pending = ENTRY_POINTS.map((entry) => path.posix.join(root, path.posix.relative('src', entry)));
  while (pending.length > 0) {
    const file = pending.pop();
    if (file === undefined || reached.has(file)) continue;
    reached.add(file);
    pending.push(...(graph.get(file) ?? []));
  }
  for (const file of files) {
    if (!reached.has(file)) {
      findings.push({
        kind: 'unreachable',
        message: `${file} is reached by no entry point (${ENTRY_POINTS.join(', ')}): if only tests or benches use it, move it to test/support/ or bench/`,
      });
    }
  }

  for (const span of functions) {
    if (span.lines > MAX_FUNCTION_LINES) {
      findings.push({
        kind: 'long-function',
        message: `${span.file}:${span.line} ${span.name} is ${span.lines} lines (at most ${MAX_FUNCTION_LINES}): split it into named steps`,
      });
    }
  }

  const unknownFolders = new Set<string>();
  for (const [file, imports] of graph) {
    const fromFolder = folderOf(root, file);
    const fromLayer = layerOf(fromFolder);
    if (fromLayer === undefined) {
      unknownFolders.add(fromFolder);
      continue;
    }
    for (const target of imports) {
      const toFolder = folderOf(root, target);
      const toLayer = layerOf(toFolder);
      if (toLayer === undefined) continue;
      if (toLayer > fromLayer) {
        findings.push({
          kind: 'layer',
          message: `${file} imports ${target}: ${fromFolder}/ (layer ${fromLayer}) may not depend on ${toFolder}/ (layer ${toLayer}); move the shared piece down to its owner`,
        });
      } else if (
        toLayer === fromLayer &&
        toFolder !== fromFolder &&
        !SAME_LAYER_IMPORTS[fromFolder]?.includes(toFolder)
      ) {
        findings.push({
          kind: 'same-layer',
          message: `${file} imports ${target}: ${fromFolder}/ and ${toFolder}/ share layer ${fromLayer} and stay independent; move the shared piece down to a lower layer, or if ${fromFolder}/ truly builds on ${toFolder}/, say so in SAME_LAYER_IMPORTS in scripts/check-structure.ts`,
        });
      }
    }
  }
  for (const folder of unknownFolders) {
    findings.push({
      kind: 'unknown-folder',
      message: `src/${folder}/ has no layer: add it to LAYERS in scripts/check-structure.ts`,
    });
  }

  const longestFunctions = [...functions].sort((a, b) => b.lines - a.lines).slice(0, 20);
  return { files: files.length, findings, longestFunctions };
}

const isMain = process.argv[1] !== undefined && import.meta.url.endsWith(path.basename(process.argv[1]));
if (isMain) {
  const report = checkStructure();
  if (process.argv.includes('--json')) {
    console.log(JSON.stringify(report, null, 2));
  } else {
    for (const finding of report.findings) console.log(`${finding.kind}: ${finding.message}`);
    if (process.argv.includes('--report')) {
      console.log('\nlongest functions:');
      for (const span of report.longestFunctions) {
        console.log(`  ${String(span.lines).padStart(4)}  ${span.file}:${span.line} ${span.name}`);
      }
    }
    console.log(
      report.findings.length === 0
        ? `check:structure: ${report.files} files in src/, no circles, none unreachable, no function over ${MAX_FUNCTION_LINES} lines, layers kept`
        : `check:structure: ${report.findings.length} finding(s) in ${report.files} files`,
    );
  }
  process.exitCode = report.findings.length === 0 ? 0 : 1;
}
