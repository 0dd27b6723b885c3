// Run before npm test's tap: builds tap's Test class for .taprc's plugins when the one installed is
// built for others (a fresh install's is built for tap's defaults). tap would build it itself,
// but after its runner has loaded the old one, and the first run's test processes then load the
// old plugins' hooks too (@tapjs/mock's): under them no test process wrote its coverage record,
// and a fresh clone's first npm test failed its coverage floor with every test passing.
import { execFileSync } from 'node:child_process'
import { TapConfig } from '@tapjs/config'
import { signature } from '@tapjs/test/test-built'

// A build takes some 3 s; one that hangs fails the run after two minutes.
if ((await TapConfig.load()).pluginSignature !== signature) execFileSync('tap', ['build'], { stdio: 'inherit', timeout: 120_000 })
