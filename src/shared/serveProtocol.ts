// What `holdfast serve` (src/server) and the app in a browser (src/renderer/api) agree on.

/** The request header that carries the session token of the serve command. */
export const TOKEN_HEADER = 'x-holdfast-token';
