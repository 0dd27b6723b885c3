// A secret fit for a message, a log line or `npm run config`. A URL keeps its scheme, user, host
// and path, never its password or its query (which may hold one: `?password=`, `sslpassword=`);
// any other secret, only its length.

/** A URL with its password and query hidden; a value that is no URL, as it is (a store URL's messages). */
export function redactUrl (url: string): string {
  return url.replace(/^(\w+:\/\/[^:/@]*:)[^@]*@/, '$1***@').replace(/\?.*$/s, '?…')
}

/** Any secret: a URL as redactUrl shows it, anything else as its length. */
export const redact = (value: string): string => /^[a-z][\w+.-]*:/i.test(value) ? redactUrl(value) : `(secret, ${value.length} characters)`
