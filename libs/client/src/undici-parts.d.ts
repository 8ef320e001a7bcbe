// The two undici modules connection-pool.ts loads by path, typed as undici's index exports them.
declare module "undici/lib/dispatcher/pool.js" {
  const Pool: typeof import("undici").Pool;
  export default Pool;
}
declare module "undici/lib/api/api-request.js" {
  const request: (
    this: import("undici").Dispatcher,
    options: import("undici").Dispatcher.RequestOptions,
  ) => Promise<import("undici").Dispatcher.ResponseData>;
  export default request;
}
