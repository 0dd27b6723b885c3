// Loaded into a service (node --import) by a test: SIGUSR2 throws an error nothing catches, a
// fault the service must log and exit on.
process.on('SIGUSR2', () => { throw new Error('a fault the test injected') })
