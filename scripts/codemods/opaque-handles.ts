// Codemod for the opaque database handles (docs/development.md "Reaching the database"), to re-run after merging
// code written while the handles were Prisma's and Kysely's own types:
//
//   npx tsx scripts/codemods/opaque-handles.ts          (rewrites and formats the files, prints which)
//   npx tsx scripts/codemods/opaque-handles.ts --check  (changes nothing; exits 1 if it would change a file)
//   npx tsx scripts/codemods/opaque-handles.ts src/persistence/quotes.ts test  (only these files or folders)
//
// Idempotent. It touches only the code allowed to see Prisma and Kysely (src/persistence, test/, and the scripts
// .dependency-cruiser.cjs exempts from `database-types-only-in-persistence`):
// 1. src/persistence modules import ./internal/database instead of ./database (the facade for the rest of the code);
//    tests and the exempt scripts import from ./internal/database what the facade does not export, and the typed
//    createPrismaClient.
// 2. there, a handle used as Prisma's or Kysely's object (`db.customer.findMany`, `tx.selectFrom`, an argument of
//    type Kysely<DB>) is unwrapped where it is used: `prismaOf(db).customer...` for the client, `sqlOf(tx)` otherwise.
// 3. elsewhere, `client.$disconnect()` becomes `closeDatabaseClient(client)`. Any other use of a handle as Prisma or
//    Kysely outside persistence is left for the type check to refuse: such code must call a persistence function.
import path from 'node:path';
import * as prettier from 'prettier';
import { type ImportDeclaration, Node, Project, type SourceFile, SyntaxKind, type Type } from 'ts-morph';

const root = path.resolve(__dirname, '../..');
const facadePath = path.join(root, 'src/persistence/database.ts');
const internalPath = path.join(root, 'src/persistence/internal/database.ts');

/** Scripts that inspect or measure the database the way tests do: the rule's exemptions under scripts/. */
const insiderScripts = (() => {
  const config = require(path.join(root, '.dependency-cruiser.cjs')) as {
    forbidden: Array<{ name: string; from: { pathNot?: string | string[] } }>;
  };
  const rule = config.forbidden.find(({ name }) => name === 'database-types-only-in-persistence');
  if (!rule) throw new Error('.dependency-cruiser.cjs has no rule database-types-only-in-persistence');
  return [rule.from.pathNot ?? []]
    .flat()
    .filter((pattern) => pattern.startsWith('^scripts/'))
    .map((pattern) => new RegExp(pattern));
})();

/** persistence and observers may unwrap handles; elsewhere only closes them through the facade. */
type Scope = 'persistence' | 'observer' | 'elsewhere' | 'skip';

function scopeOf(file: SourceFile): Scope {
  const relative = path.relative(root, file.getFilePath()).split(path.sep).join('/');
  if (relative.startsWith('src/persistence/internal/') || relative.startsWith('src/persistence/generated/'))
    return 'skip';
  if (relative === 'src/persistence/database.ts' || relative.startsWith('clients/')) return 'skip';
  if (relative.startsWith('src/persistence/')) return 'persistence';
  if (relative.startsWith('test/fixtures/')) return 'skip';
  if (relative.startsWith('test/')) return 'observer';
  if (insiderScripts.some((pattern) => pattern.test(relative))) return 'observer';
  return 'elsewhere';
}

interface Named {
  name: string;
  alias?: string;
  isTypeOnly: boolean;
}

function namedOf(declaration: ImportDeclaration): Named[] {
  return declaration.getNamedImports().map((specifier) => ({
    name: specifier.getName(),
    alias: specifier.getAliasNode()?.getText(),
    isTypeOnly: declaration.isTypeOnly() || specifier.isTypeOnly(),
  }));
}

/** Adds names to the file's import of the internal module (one declaration), creating it after `after`. */
function importFromInternal(file: SourceFile, names: Named[], after: ImportDeclaration | undefined): void {
  if (names.length === 0) return;
  const internal = file.getProject().getSourceFileOrThrow(internalPath);
  const existing = file
    .getImportDeclarations()
    .find(
      (declaration) => declaration.getModuleSpecifierSourceFile() === internal && !declaration.getNamespaceImport(),
    );
  if (!existing) {
    const structure = {
      moduleSpecifier: file.getRelativePathAsModuleSpecifierTo(internal),
      namedImports: names.map(({ name, alias, isTypeOnly }) => ({ name, alias, isTypeOnly })),
    };
    if (after) file.insertImportDeclaration(after.getChildIndex() + 1, structure);
    else file.insertImportDeclaration(0, structure);
    return;
  }
  const present = new Set(
    existing.getNamedImports().map((specifier) => specifier.getAliasNode()?.getText() ?? specifier.getName()),
  );
  const missing = names.filter(({ name, alias }) => !present.has(alias ?? name));
  if (missing.length === 0) return;
  if (existing.isTypeOnly() && missing.some(({ isTypeOnly }) => !isTypeOnly)) {
    existing.setIsTypeOnly(false);
    for (const specifier of existing.getNamedImports()) specifier.setIsTypeOnly(true);
  }
  for (const { name, alias, isTypeOnly } of missing)
    existing.addNamedImport({ name, alias, isTypeOnly: isTypeOnly && !existing.isTypeOnly() });
}

/** Step 1: where each file imports the database module from. */
function rewriteImports(file: SourceFile, scope: 'persistence' | 'observer', facadeExports: Set<string>): boolean {
  const facade = file.getProject().getSourceFile(facadePath);
  let changed = false;
  for (const declaration of file.getImportDeclarations()) {
    if (declaration.wasForgotten() || declaration.getModuleSpecifierSourceFile() !== facade) continue;
    if (declaration.getNamespaceImport() || declaration.getDefaultImport()) continue;
    const named = namedOf(declaration);
    const moving =
      scope === 'persistence'
        ? named
        : named.filter(({ name }) => !facadeExports.has(name) || name === 'createPrismaClient');
    if (moving.length === 0) continue;
    importFromInternal(file, moving, declaration);
    if (moving.length === named.length) declaration.remove();
    else
      for (const specifier of declaration.getNamedImports())
        if (moving.some(({ name }) => name === specifier.getName())) specifier.remove();
    changed = true;
  }
  return changed;
}

/** The unwrapper a value of this type needs to be used as Prisma's or Kysely's object, or null (not a handle). */
function unwrapperFor(type: Type): 'prismaOf' | 'sqlOf' | null {
  const handleName = (member: Type): string | null => {
    const symbol = member.getSymbol();
    const declaration = symbol?.getDeclarations()[0];
    if (!symbol || !declaration || declaration.getSourceFile().getFilePath() !== internalPath) return null;
    return ['DatabaseClient', 'DatabaseTransaction'].includes(symbol.getName()) ? symbol.getName() : null;
  };
  const members = type.isUnion() ? type.getUnionTypes() : [type];
  const names = members.map(handleName);
  if (names.some((name) => name === null)) return null;
  return names.every((name) => name === 'DatabaseClient') ? 'prismaOf' : 'sqlOf';
}

/** True when the line above the node says the type check must refuse it (a test that proves the handles opaque). */
function expectsError(node: Node): boolean {
  const file = node.getSourceFile();
  const line = node.getStartLineNumber();
  const previous = file.getFullText().split('\n')[line - 2] ?? '';
  return previous.includes('@ts-expect-error');
}

/**
 * Step 2: `handle.member` becomes `prismaOf(handle).member` or `sqlOf(handle).member`, and a handle given where Kysely
 * or Prisma Client is expected is unwrapped the same way.
 */
function unwrapHandles(file: SourceFile): boolean {
  const edits: Array<{ start: number; end: number; text: string; unwrapper: 'prismaOf' | 'sqlOf' }> = [];
  for (const access of file.getDescendantsOfKind(SyntaxKind.PropertyAccessExpression)) {
    const target = access.getExpression();
    if (target.getType().getProperty(access.getName()) || expectsError(access)) continue;
    const unwrapper = unwrapperFor(target.getType());
    if (!unwrapper) continue;
    const text =
      Node.isIdentifier(target) || Node.isPropertyAccessExpression(target) ? target.getText() : `(${target.getText()})`;
    edits.push({ start: target.getStart(), end: target.getEnd(), text: `${unwrapper}(${text})`, unwrapper });
  }
  // A handle passed where Prisma's or Kysely's own object is expected (`withRelations(tx, ...)`, sql`...`.execute(tx)).
  for (const call of file.getDescendantsOfKind(SyntaxKind.CallExpression)) {
    for (const argument of call.getArguments()) {
      const unwrapper = unwrapperFor(argument.getType());
      const expected = Node.isExpression(argument) ? argument.getContextualType() : undefined;
      if (!unwrapper || !expected || argument.getType().isAssignableTo(expected) || expectsError(argument)) continue;
      const text =
        Node.isIdentifier(argument) || Node.isPropertyAccessExpression(argument)
          ? argument.getText()
          : `(${argument.getText()})`;
      const wanted = /\bPrismaClient\b/.test(expected.getText()) ? 'prismaOf' : 'sqlOf';
      if (wanted === 'prismaOf' && unwrapper !== 'prismaOf') continue; // a transaction never becomes Prisma Client
      edits.push({ start: argument.getStart(), end: argument.getEnd(), text: `${wanted}(${text})`, unwrapper: wanted });
    }
  }
  if (edits.length === 0) return false;
  const unwrappers = new Set(edits.map(({ unwrapper }) => unwrapper));
  for (const edit of edits.sort((a, b) => b.start - a.start)) file.replaceText([edit.start, edit.end], edit.text);
  importFromInternal(
    file,
    [...unwrappers].map((name) => ({ name, isTypeOnly: false })),
    file.getImportDeclarations().at(-1),
  );
  return true;
}

/** Step 3, elsewhere: `client.$disconnect()` becomes `closeDatabaseClient(client)` (the facade's). */
function closeThroughFacade(file: SourceFile): boolean {
  const edits: Array<{ start: number; end: number; text: string }> = [];
  for (const call of file.getDescendantsOfKind(SyntaxKind.CallExpression)) {
    const callee = call.getExpression();
    if (!Node.isPropertyAccessExpression(callee) || callee.getName() !== '$disconnect') continue;
    if (call.getArguments().length > 0 || expectsError(call)) continue;
    if (unwrapperFor(callee.getExpression().getType()) !== 'prismaOf') continue;
    edits.push({
      start: call.getStart(),
      end: call.getEnd(),
      text: `closeDatabaseClient(${callee.getExpression().getText()})`,
    });
  }
  if (edits.length === 0) return false;
  for (const edit of edits.sort((a, b) => b.start - a.start)) file.replaceText([edit.start, edit.end], edit.text);
  const facade = file.getProject().getSourceFileOrThrow(facadePath);
  // A file that loads the database module late (`const { createPrismaClient } = await import(...)`, so that a fresh
  // clone's generated client is loaded only once generated) takes closeDatabaseClient from the same import.
  const late = file.getDescendantsOfKind(SyntaxKind.VariableDeclaration).find((declaration) => {
    const initializer = declaration.getInitializer()?.getText() ?? '';
    const specifier = /^await import\('([^']+)'\)$/.exec(initializer)?.[1];
    return (
      specifier !== undefined &&
      Node.isObjectBindingPattern(declaration.getNameNode()) &&
      path.resolve(path.dirname(file.getFilePath()), `${specifier}.ts`) === facadePath
    );
  });
  if (late) {
    const pattern = late.getNameNode();
    if (
      Node.isObjectBindingPattern(pattern) &&
      !pattern.getElements().some((element) => element.getName() === 'closeDatabaseClient')
    )
      late.replaceWithText(late.getText().replace(/^\{\s*([^}]*?)\s*\}/, '{ $1, closeDatabaseClient }'));
    return true;
  }
  const existing = file
    .getImportDeclarations()
    .find((declaration) => declaration.getModuleSpecifierSourceFile() === facade && !declaration.getNamespaceImport());
  const imported = existing?.getNamedImports().some((specifier) => specifier.getName() === 'closeDatabaseClient');
  if (existing && !imported) {
    if (existing.isTypeOnly()) {
      existing.setIsTypeOnly(false);
      for (const specifier of existing.getNamedImports()) specifier.setIsTypeOnly(true);
    }
    existing.addNamedImport('closeDatabaseClient');
  } else if (!existing) {
    file.insertImportDeclaration(file.getImportDeclarations().length, {
      moduleSpecifier: file.getRelativePathAsModuleSpecifierTo(facade),
      namedImports: ['closeDatabaseClient'],
    });
  }
  return true;
}

async function main(): Promise<void> {
  const check = process.argv.includes('--check');
  const project = new Project({ tsConfigFilePath: path.join(root, 'tsconfig.json') });
  const facadeExports = new Set(project.getSourceFileOrThrow(facadePath).getExportedDeclarations().keys());
  // Optional paths (files or folders) limit the files it edits, e.g. the ones a merge brought.
  const only = process.argv
    .slice(2)
    .filter((argument) => !argument.startsWith('--'))
    .map((argument) => path.resolve(argument));
  const changed: string[] = [];
  for (const file of project.getSourceFiles()) {
    const filePath = file.getFilePath();
    if (only.length > 0 && !only.some((limit) => filePath === limit || filePath.startsWith(`${limit}${path.sep}`)))
      continue;
    const scope = scopeOf(file);
    if (scope === 'skip') continue;
    const edited =
      scope === 'elsewhere'
        ? closeThroughFacade(file)
        : [rewriteImports(file, scope, facadeExports), unwrapHandles(file)].some(Boolean);
    if (edited) changed.push(path.relative(root, file.getFilePath()));
  }
  for (const file of changed) console.log(`${check ? 'would change' : 'changed'} ${file}`);
  if (check) {
    process.exitCode = changed.length > 0 ? 1 : 0;
    return;
  }
  // Formatted as the repository's prettier config says, so a re-run leaves no diff beyond its edits.
  for (const file of project.getSourceFiles()) {
    if (!changed.includes(path.relative(root, file.getFilePath()))) continue;
    const options = await prettier.resolveConfig(file.getFilePath());
    file.replaceWithText(await prettier.format(file.getFullText(), { ...options, filepath: file.getFilePath() }));
  }
  project.saveSync();
  console.log(`${changed.length} file(s) changed and formatted`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
