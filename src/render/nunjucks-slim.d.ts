// nunjucks' own build without its compiler (lexer, parser): it renders precompiled templates only,
// with the same API as the full library, whose types it takes.
declare module "nunjucks/browser/nunjucks-slim.min.js" {
  import nunjucks from "nunjucks";
  export default nunjucks;
}
