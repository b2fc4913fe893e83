<?php
// The `php-gzip` scenario's script: a 20 KiB HTML page (text/html, PHP's default type)
// that the server in front compresses on the fly. Rows of a table with changing numbers,
// so it compresses as real pages do (about 4:1 at gzip level 1), not to nothing.
$out = "<!DOCTYPE html>\n<html><head><title>hello from php</title></head><body><table>\n";
for ($i = 0; strlen($out) < 20480; $i++) {
    $out .= '<tr><td>' . $i . '</td><td>item ' . (($i * 7919) % 10007) . '</td><td>'
        . dechex($i * 2654435761 % 4294967296) . "</td></tr>\n";
}
echo substr($out, 0, 20480);
