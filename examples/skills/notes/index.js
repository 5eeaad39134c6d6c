// Notes: keeps short notes in the skill's workspace, one file per note under notes/.
//
//   skillbox run examples/skills/notes --input '{"add": "buy milk"}'   adds a note, returns all notes
//   skillbox run examples/skills/notes                                 lists the notes
//   skillbox run examples/skills/notes --input '{"remove": 2}'         removes note 2
//   skillbox run examples/skills/notes --input '{"clear": true}'       removes every note
//
// Every change is also appended to history.log, so the workspace shows both whole-file writes and appends.
//
// skill.json's "tools" section makes the named exports below MCP tools (skillbox mcp serves them as
// notes__add, notes__list and notes__remove); their arguments are checked against the input schemas
// before the skill runs, and their values against the output schemas.
const fs = openhuman.fs;
const MAX_NOTE_BYTES = 4096;

function noteFile(id) {
  return `notes/${String(id).padStart(4, '0')}.txt`;
}

async function noteIds() {
  const entries = await fs.readdir('notes');
  return entries
    .filter((e) => e.type === 'file' && /^\d{4}\.txt$/.test(e.name))
    .map((e) => Number(e.name.slice(0, 4)));
}

async function add(text) {
  if (typeof text !== 'string' || text.length === 0) throw new TypeError('"add" must be a non-empty string');
  if (new TextEncoder().encode(text).length > MAX_NOTE_BYTES) {
    throw new RangeError(`a note is at most ${MAX_NOTE_BYTES} bytes`);
  }
  const ids = await noteIds();
  const id = ids.length === 0 ? 1 : Math.max(...ids) + 1;
  await fs.writeFile(noteFile(id), text);
  await fs.appendFile('history.log', `added ${id}\n`);
  return id;
}

async function remove(id) {
  if (!Number.isInteger(id) || id < 1 || id > 9999) throw new TypeError('"remove" must be a note number');
  if (!(await fs.exists(noteFile(id)))) throw new Error(`there is no note ${id}`);
  await fs.remove(noteFile(id));
  await fs.appendFile('history.log', `removed ${id}\n`);
}

export default async function (input) {
  input = input ?? {};
  await fs.mkdir('notes', { recursive: true });
  let added;
  if ('add' in input) added = await add(input.add);
  if ('remove' in input) await remove(input.remove);
  if (input.clear === true) {
    await fs.remove('notes', { recursive: true });
    await fs.mkdir('notes');
    await fs.appendFile('history.log', 'cleared\n');
  }

  const notes = [];
  for (const id of (await noteIds()).sort((a, b) => a - b)) {
    notes.push({ id, text: await fs.readFile(noteFile(id)) });
  }
  const history = (await fs.exists('history.log')) ? (await fs.stat('history.log')).size : 0;
  return { added, count: notes.length, notes, historyBytes: history };
}

// The MCP tools (skill.json "tools"). Each returns an object, as its output schema describes.
export async function addNote({ text }) {
  await fs.mkdir('notes', { recursive: true });
  const id = await add(text);
  return { id, count: (await noteIds()).length };
}

export async function listNotes() {
  await fs.mkdir('notes', { recursive: true });
  const notes = [];
  for (const id of (await noteIds()).sort((a, b) => a - b)) {
    notes.push({ id, text: await fs.readFile(noteFile(id)) });
  }
  return { count: notes.length, notes };
}

export async function removeNote({ id }) {
  await fs.mkdir('notes', { recursive: true });
  await remove(id);
  return { removed: id, count: (await noteIds()).length };
}
