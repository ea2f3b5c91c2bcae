// Where a browser reads a note: the operator panel's read-only view, `<publicUrl>/admin/notes/<path>`,
// when the server is public over https (ChatGPT opens a result's url as a citation). Families link to it
// through this one function, so the panel's route and the links cannot drift apart. Pure.

/** The panel's note view for a vault path, or undefined when server.publicUrl is not https. */
export function noteViewUrl(publicUrl: string | null | undefined, path: string): string | undefined {
  if (!publicUrl || !publicUrl.startsWith('https://')) return undefined;
  return `${publicUrl.replace(/\/+$/, '')}/admin/notes/${notePathSegments(path)}`;
}

/** A vault path as URL path segments (each encoded, slashes kept). */
export function notePathSegments(path: string): string {
  return path.split('/').map(encodeURIComponent).join('/');
}
