<?php
// The `php` scenario's script: small, no I/O, so the run measures the path
// server -> FastCGI -> php-fpm -> back, not PHP itself.
header('Content-Type: text/plain');
echo "hello from php ", PHP_VERSION, "\n";
