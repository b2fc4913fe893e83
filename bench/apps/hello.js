// The `node` scenario's app: a hello-world Node.js http server on the unix socket PORT
// names, as the controller runs an app (one process per socket).
require('http')
  .createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end('hello from node\n');
  })
  .listen(process.env.PORT);
