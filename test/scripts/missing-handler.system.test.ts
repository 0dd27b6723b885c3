import t from 'tap'
import { copyOfProject, run, succeeds } from '../helpers/project-copy.ts'
import { addToDocument } from '../helpers/new-operation.ts'

// The first half of adding an operation (new-operation.system.test.ts has the whole): with the
// operation in the document and the types generated, the compiler fails, naming the handler that
// is missing, before anything runs. A file of its own, so the two halves run side by side.

t.test('an operation in the document without its handler: the compiler names it', async (t) => {
  const copy = copyOfProject(t.testdir())
  addToDocument(copy)
  succeeds(t, 'npm run generate', await run(copy, 'npm', 'run', '--silent', 'generate'))
  const missing = await run(copy, 'npm', 'run', '--silent', 'typecheck')
  t.not(missing.status, 0, 'the compiler fails')
  t.match(missing.output, /src\/handlers\/index\.ts.*Property 'getPlant' is missing/s, 'naming the missing handler')
})
