#include "common/config/config_loader.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "tests/unit/common/config/load_helpers.h"

namespace scalws::common::config {
namespace {

using testing::errorsOf;
using testing::snippetErrors;

// Every key of the model, each set to something other than its default.
constexpr char kFullConfig[] = R"toml(
[server]
workers = 4
mode = "single"
cpus = [2, 3]
user = "www-data"
sandbox = "required"
header_timeout = "5s"
keepalive_timeout = 30
body_timeout = "500ms"
send_timeout = "2m"
shutdown_timeout = "1h"
max_request_line = "4k"
max_header_size = 65536
max_headers = 50
max_body = "10m"
max_requests_per_connection = 100
max_connections = 2000
server_header = "edge"
access_log = "logs/access.log"
access_log_format = "json"
error_log = "/var/log/scalws/error.log"
log_level = "debug"

[[listen]]
address = "127.0.0.1:8080"

[[listen]]
address = "[::]:8443"
tls = { cert = "certs/site.crt", key = "/etc/ssl/site.key" }
http2 = true

[[route]]
match = { exact = "/health", host = ["Example.COM", "*.example.org"], method = ["GET", "HEAD"] }
respond = { status = 204, headers = { "X-One" = "1", "cache-control" = "no-store" } }
policy = { max_body = "64k", timeout = "30s", allow = ["10.0.0.0/8", "::1/128", "127.0.0.1"] }

[[route]]
match = { prefix = "/static/", suffix = ".css" }
static = { root = "/srv/www", index = ["index.htm", "default.html"], open_file_cache = "valid:30s", precompressed = ["gzip", "br"], max_age = "1h", types = { CSS = "text/css; charset=utf-8", ".woff2" = "font/woff2" }, follow_symlinks = "never", allow_dotfiles = true }

[[route]]
respond = { body = "fallback\n" }
)toml";

TEST(ConfigLoader, FullConfigRoundTrip) {
  Result<SiteConfig> loaded = loadSiteConfigString(kFullConfig, "/etc/scalws/site.toml");
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  const SiteConfig& site = *loaded;
  EXPECT_EQ(site.source, "/etc/scalws/site.toml");

  ASSERT_TRUE(site.server.has_value());
  const ServerConfig& s = *site.server;
  EXPECT_EQ(s.workers, 4u);
  EXPECT_EQ(s.mode, WorkerMode::kSingle);
  EXPECT_EQ(s.cpus, (std::vector<uint32_t>{2, 3}));
  EXPECT_EQ(s.user, "www-data");
  EXPECT_EQ(s.sandbox, SandboxMode::kRequired);
  EXPECT_EQ(s.header_timeout, 5'000u);
  EXPECT_EQ(s.keepalive_timeout, 30'000u);
  EXPECT_EQ(s.body_timeout, 500u);
  EXPECT_EQ(s.send_timeout, 120'000u);
  EXPECT_EQ(s.shutdown_timeout, 3'600'000u);
  EXPECT_EQ(s.max_request_line, 4096u);
  EXPECT_EQ(s.max_header_size, 65536u);
  EXPECT_EQ(s.max_headers, 50u);
  EXPECT_EQ(s.max_body, 10u * 1024 * 1024);
  EXPECT_EQ(s.max_requests_per_connection, 100u);
  EXPECT_EQ(s.max_connections, 2000u);
  EXPECT_EQ(s.server_header, "edge");
  EXPECT_EQ(s.access_log, "/etc/scalws/logs/access.log");
  EXPECT_EQ(s.access_log_format, AccessLogFormat::kJson);
  EXPECT_EQ(s.error_log, "/var/log/scalws/error.log");
  EXPECT_EQ(s.log_level, "debug");
  EXPECT_EQ(s.where.toString(), "/etc/scalws/site.toml:2:1");

  ASSERT_EQ(site.listens.size(), 2u);
  EXPECT_EQ(site.listens[0].address, "127.0.0.1:8080");
  EXPECT_EQ(site.listens[0].host, "127.0.0.1");
  EXPECT_EQ(site.listens[0].port, 8080);
  EXPECT_FALSE(site.listens[0].tls.has_value());
  EXPECT_FALSE(site.listens[0].http2);
  EXPECT_EQ(site.listens[0].where.toString(), "/etc/scalws/site.toml:25:1");
  EXPECT_EQ(site.listens[1].address, "[::]:8443");
  EXPECT_EQ(site.listens[1].host, "::");
  EXPECT_EQ(site.listens[1].port, 8443);
  ASSERT_TRUE(site.listens[1].tls.has_value());
  EXPECT_EQ(site.listens[1].tls->cert, "/etc/scalws/certs/site.crt");
  EXPECT_EQ(site.listens[1].tls->key, "/etc/ssl/site.key");
  EXPECT_EQ(site.listens[1].tls->where.toString(), "/etc/scalws/site.toml:30:7");
  EXPECT_TRUE(site.listens[1].http2);

  ASSERT_EQ(site.routes.size(), 3u);
  const RouteConfig& health = site.routes[0];
  EXPECT_EQ(health.where.toString(), "/etc/scalws/site.toml:33:1");
  EXPECT_EQ(health.match.exact, "/health");
  EXPECT_FALSE(health.match.prefix.has_value());
  EXPECT_FALSE(health.match.suffix.has_value());
  EXPECT_EQ(health.match.hosts, (std::vector<std::string>{"example.com", "*.example.org"}));
  EXPECT_EQ(health.match.methods, (std::vector<std::string>{"GET", "HEAD"}));
  const auto* respond = std::get_if<RespondAction>(&health.action);
  ASSERT_NE(respond, nullptr);
  EXPECT_EQ(respond->status, 204);
  EXPECT_EQ(respond->body, "");
  ASSERT_EQ(respond->headers.size(), 2u);  // in file order, not sorted
  EXPECT_EQ(respond->headers[0].name, "X-One");
  EXPECT_EQ(respond->headers[0].value, "1");
  EXPECT_EQ(respond->headers[1].name, "cache-control");
  EXPECT_EQ(respond->headers[1].value, "no-store");
  EXPECT_EQ(health.policy.max_body, 64u * 1024);
  EXPECT_EQ(health.policy.timeout, 30'000u);
  ASSERT_EQ(health.policy.allow.size(), 3u);
  EXPECT_EQ(health.policy.allow[0].text, "10.0.0.0/8");
  EXPECT_FALSE(health.policy.allow[0].v6);
  EXPECT_EQ(health.policy.allow[0].prefix_len, 8);
  EXPECT_EQ(health.policy.allow[0].addr[0], 10);
  EXPECT_TRUE(health.policy.allow[1].v6);
  EXPECT_EQ(health.policy.allow[1].prefix_len, 128);
  EXPECT_EQ(health.policy.allow[1].addr[15], 1);
  EXPECT_EQ(health.policy.allow[2].prefix_len, 32);
  EXPECT_EQ(health.policy.allow[2].addr[0], 127);
  EXPECT_EQ(health.policy.allow[2].addr[3], 1);

  const RouteConfig& files = site.routes[1];
  EXPECT_FALSE(files.match.exact.has_value());
  EXPECT_EQ(files.match.prefix, "/static/");
  EXPECT_EQ(files.match.suffix, ".css");
  EXPECT_TRUE(files.match.hosts.empty());
  EXPECT_TRUE(files.match.methods.empty());
  const auto* st = std::get_if<StaticAction>(&files.action);
  ASSERT_NE(st, nullptr);
  EXPECT_EQ(st->root, "/srv/www");
  EXPECT_EQ(st->index, (std::vector<std::string>{"index.htm", "default.html"}));
  EXPECT_EQ(st->open_file_cache.mode, OpenFileCacheConfig::Mode::kValid);
  EXPECT_EQ(st->open_file_cache.valid_for, 30'000u);
  EXPECT_EQ(st->precompressed, (std::vector<std::string>{"gzip", "br"}));
  EXPECT_EQ(st->max_age, 3600u);
  EXPECT_EQ(st->types, (std::map<std::string, std::string>{{"css", "text/css; charset=utf-8"},
                                                           {"woff2", "font/woff2"}}));
  EXPECT_EQ(st->follow_symlinks, FollowSymlinks::kNever);
  EXPECT_TRUE(st->allow_dotfiles);
  EXPECT_FALSE(files.policy.max_body.has_value());
  EXPECT_FALSE(files.policy.timeout.has_value());
  EXPECT_TRUE(files.policy.allow.empty());

  const RouteConfig& fallback = site.routes[2];
  EXPECT_FALSE(fallback.match.exact || fallback.match.prefix || fallback.match.suffix);
  const auto* fallback_respond = std::get_if<RespondAction>(&fallback.action);
  ASSERT_NE(fallback_respond, nullptr);
  EXPECT_EQ(fallback_respond->status, 200);
  EXPECT_EQ(fallback_respond->body, "fallback\n");
  EXPECT_TRUE(fallback_respond->headers.empty());
}

TEST(ConfigLoader, MinimalConfigHasDocumentedDefaults) {
  Result<SiteConfig> loaded = loadSiteConfigString(
      "[[listen]]\naddress = \"*:8080\"\n[[route]]\nstatic = { root = \"/srv\" }\n", "t.toml");
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  EXPECT_FALSE(loaded->server.has_value());
  ASSERT_EQ(loaded->listens.size(), 1u);
  EXPECT_EQ(loaded->listens[0].host, "0.0.0.0");
  const auto& st = std::get<StaticAction>(loaded->routes[0].action);
  EXPECT_EQ(st.index, (std::vector<std::string>{"index.html"}));
  EXPECT_EQ(st.open_file_cache.mode, OpenFileCacheConfig::Mode::kCheck);
  EXPECT_TRUE(st.precompressed.empty());
  EXPECT_FALSE(st.max_age.has_value());
  EXPECT_EQ(st.follow_symlinks, FollowSymlinks::kBeneath);
  EXPECT_FALSE(st.allow_dotfiles);

  const ServerConfig& server = serverOrDefaults(*loaded);
  const ServerConfig defaults;
  EXPECT_EQ(&server, &serverOrDefaults(SiteConfig{}));  // one static default
  EXPECT_EQ(server.workers, defaults.workers);
  EXPECT_EQ(server.header_timeout, 10'000u);
  EXPECT_EQ(server.server_header, "scalws");
  EXPECT_EQ(server.sandbox, SandboxMode::kOn);
}

TEST(ConfigLoader, ServerOrDefaultsReturnsTheServerTable) {
  SiteConfig site;
  site.server = ServerConfig{};
  site.server->workers = 7;
  EXPECT_EQ(serverOrDefaults(site).workers, 7u);
  EXPECT_EQ(&serverOrDefaults(site), &*site.server);
}

TEST(ConfigLoader, SourceLocationToString) {
  EXPECT_EQ((SourceLocation{"a/site.toml", 12, 3}).toString(), "a/site.toml:12:3");
  EXPECT_EQ((SourceLocation{"site.toml", 0, 0}).toString(), "site.toml");
}

TEST(ConfigLoader, EveryErrorIsReportedSortedByPosition) {
  EXPECT_EQ(errorsOf(R"toml([[route]]
respond = { status = 42 }
bogus = 1

[server]
workers = 0
mode = "both"

[[listen]]
address = "127.0.0.1:0"
)toml"),
            "t.toml:2:22: route.respond.status: must be between 200 and 599, found 42\n"
            "t.toml:3:1: route: unknown key \"bogus\" (expected one of: match, respond, static, "
            "status, php, proxy, app, cache_purge, redirect, rewrite, policy, headers, errors, "
            "compress, auth, limit)\n"
            "t.toml:6:11: server.workers: must be between 1 and 1024, found 0\n"
            "t.toml:7:8: server.mode: unknown value \"both\" (expected \"multi\" or \"single\")\n"
            "t.toml:10:11: listen.address: port must be between 1 and 65535, found \"0\"");
}

TEST(ConfigLoader, SyntaxErrorHasItsPosition) {
  EXPECT_EQ(errorsOf("[server]\nworkers = = 2\n"),
            "t.toml:2:11: TOML syntax error: Error while parsing value: could not determine "
            "value type");
  EXPECT_EQ(errorsOf("[server]\nworkers = 1\nworkers = 2\n"),
            "t.toml:3:11: TOML syntax error: Error while parsing key-value pair: cannot redefine "
            "existing integer 'workers'");
}

TEST(ConfigLoader, AtLeastOneListen) {
  EXPECT_EQ(errorsOf(""), "t.toml:1:1: at least one [[listen]] is required");
  EXPECT_EQ(errorsOf("# nothing\n[[route]]\nrespond = {}\n"),
            "t.toml:1:1: at least one [[listen]] is required");
  EXPECT_EQ(errorsOf("listen = []\n"), "t.toml:1:10: listen: at least one [[listen]] is required");
}

TEST(ConfigLoader, UnknownTopLevelKeys) {
  EXPECT_EQ(snippetErrors("[caches.pages]\nmemory = \"1m\"\n"),
            "t.toml:1:2: unknown key \"caches\" (did you mean \"cache\"?)");
  EXPECT_EQ(snippetErrors("[store]\n"),
            "t.toml:1:2: unknown key \"store\" (expected one of: server, listen, site, route, "
            "php_pool, upstream, cache, real_ip)");
  EXPECT_EQ(snippetErrors("php_pool = 1\n"),
            "t.toml:1:12: php_pool: expected a table, found an integer");
  EXPECT_EQ(snippetErrors("[[routes]]\n"),
            "t.toml:1:3: unknown key \"routes\" (did you mean \"route\"?)");
}

TEST(ConfigLoader, ControllerKeysOfServerRefusedInAnInstanceConfig) {
  LoadOptions instance;
  instance.server_table = ServerTable::kSiteOnly;
  struct Case {
    const char* line;
    const char* error;
  };
  const Case cases[] = {
      {"workers = 2",
       "t.toml:2:11: server.workers: set by the controller (scalwsctl instance "
       "add --cpus (one worker per CPU) and --mode)"},
      {"mode = \"single\"",
       "t.toml:2:8: server.mode: set by the controller (scalwsctl instance "
       "add --mode)"},
      {"cpus = [0]",
       "t.toml:2:8: server.cpus: set by the controller (scalwsctl instance add "
       "--cpus)"},
      {"user = \"www\"",
       "t.toml:2:8: server.user: set by the controller (scalwsctl instance "
       "add --user)"},
      {"sandbox = false",
       "t.toml:2:11: server.sandbox: set by the controller (the controller: "
       "instance workers always run sandboxed)"},
      {"seccomp_action = \"kill\"",
       "t.toml:2:18: server.seccomp_action: set by the "
       "controller (the controller)"},
      {"temp_dir = \"/tmp\"",
       "t.toml:2:12: server.temp_dir: set by the controller (the "
       "controller)"},
      {"error_log = \"/tmp/e.log\"",
       "t.toml:2:13: server.error_log: set by the controller "
       "(the controller: LOG_DIR/NAME/error.log "
       "(scalws-controller --log-dir))"},
      {"access_log = \"/tmp/a.log\"",
       "t.toml:2:14: server.access_log: set by the controller "
       "(LOG_DIR/NAME/access.log, scalws-controller --log-dir); "
       "only true or false here"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(errorsOf(testing::withListen(std::string("[server]\n") + c.line + "\n"), instance),
              c.error);
  }
  // Every one reported, not only the first.
  std::string all = errorsOf(
      testing::withListen("[server]\nworkers = 2\nuser = \"x\"\nheader_timeout = \"1s\"\n"),
      instance);
  EXPECT_NE(all.find("t.toml:2:11: server.workers"), std::string::npos) << all;
  EXPECT_NE(all.find("t.toml:3:8: server.user"), std::string::npos) << all;
  EXPECT_EQ(all.find("header_timeout"), std::string::npos) << all;
  // Standalone, the same keys load.
  Result<SiteConfig> full = loadSiteConfigString(
      testing::withListen("[server]\nworkers = 2\nuser = \"www\"\n"), "t.toml");
  ASSERT_TRUE(full.ok()) << full.status().message();
  EXPECT_EQ(full->server->workers, 2u);
}

TEST(ConfigLoader, SiteKeysOfServerLoadInAnInstanceConfig) {
  LoadOptions instance;
  instance.server_table = ServerTable::kSiteOnly;
  Result<SiteConfig> site = loadSiteConfigString(
      testing::withListen("[server]\nheader_timeout = \"1s\"\nkeepalive_timeout = 0\n"
                          "body_timeout = \"2s\"\nsend_timeout = \"3s\"\n"
                          "shutdown_timeout = \"4s\"\nmax_request_line = \"1k\"\n"
                          "max_header_size = \"2k\"\nmax_headers = 7\nmax_body = 10\n"
                          "max_requests_per_connection = 5\nmax_connections = 9\n"
                          "server_header = false\naccess_log_format = \"json\"\n"
                          "log_level = \"warn\"\naccess_log = false\n"),
      "t.toml", instance);
  ASSERT_TRUE(site.ok()) << site.status().message();
  const ServerConfig& s = *site->server;
  EXPECT_EQ(s.header_timeout, 1000u);
  EXPECT_EQ(s.keepalive_timeout, 0u);
  EXPECT_EQ(s.body_timeout, 2000u);
  EXPECT_EQ(s.send_timeout, 3000u);
  EXPECT_EQ(s.shutdown_timeout, 4000u);
  EXPECT_EQ(s.max_request_line, 1024u);
  EXPECT_EQ(s.max_header_size, 2048u);
  EXPECT_EQ(s.max_headers, 7u);
  EXPECT_EQ(s.max_body, 10u);
  EXPECT_EQ(s.max_requests_per_connection, 5u);
  EXPECT_EQ(s.max_connections, 9u);
  EXPECT_EQ(s.server_header, "");
  EXPECT_EQ(s.access_log_format, AccessLogFormat::kJson);
  EXPECT_EQ(s.log_level, "warn");
  EXPECT_FALSE(s.instance_access_log);
  EXPECT_TRUE(s.access_log.empty());
  // The controller's settings stay at their defaults, for the worker to fill in.
  EXPECT_EQ(s.workers, 1u);
  EXPECT_TRUE(s.user.empty());
  // access_log = true is the default; a bad value of a site key is still an error.
  Result<SiteConfig> on = loadSiteConfigString(testing::withListen("[server]\naccess_log = true\n"),
                                               "t.toml", instance);
  ASSERT_TRUE(on.ok()) << on.status().message();
  EXPECT_TRUE(on->server->instance_access_log);
  EXPECT_EQ(errorsOf(testing::withListen("[server]\nmax_body = \"lots\"\n"), instance)
                .rfind("t.toml:2:12: server.max_body:", 0),
            0u);
  Result<SiteConfig> none = loadSiteConfigString(testing::withListen(""), "t.toml", instance);
  EXPECT_TRUE(none.ok()) << none.status().message();
}

TEST(ConfigLoader, CachesLoadInAnInstanceConfigToo) {
  LoadOptions instance;
  instance.server_table = common::config::ServerTable::kSiteOnly;
  instance.php_pools_from_controller = true;
  Result<SiteConfig> ok =
      loadSiteConfigString(testing::withListen("[cache.c]\nmemory = \"1m\"\n"), "t.toml", instance);
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_EQ(ok->caches.size(), 1u);
}

TEST(ConfigLoader, RelativePathsResolveAgainstTheConfigDirectory) {
  const char* text =
      "[server]\naccess_log = \"../log/a.log\"\n[[listen]]\naddress = \"127.0.0.1:1\"\n"
      "tls = { cert = \"c.pem\", key = \"./k/k.pem\" }\n";
  Result<SiteConfig> site = loadSiteConfigString(text, "/etc/scalws/sites/a.toml");
  ASSERT_TRUE(site.ok()) << site.status().message();
  EXPECT_EQ(site->server->access_log, "/etc/scalws/log/a.log");
  EXPECT_EQ(site->listens[0].tls->cert, "/etc/scalws/sites/c.pem");
  EXPECT_EQ(site->listens[0].tls->key, "/etc/scalws/sites/k/k.pem");

  // A bare name is relative to the working directory's config.
  Result<SiteConfig> bare = loadSiteConfigString(text, "a.toml");
  ASSERT_TRUE(bare.ok()) << bare.status().message();
  EXPECT_EQ(bare->listens[0].tls->cert,
            (std::filesystem::current_path() / "c.pem").lexically_normal().string());
}

TEST(ConfigLoader, RelativeStaticRootResolvesAgainstTheConfigDirectory) {
  const char* text =
      "[[listen]]\naddress = \"127.0.0.1:1\"\n[[route]]\nstatic = { root = \"www\" }\n"
      "[[route]]\nstatic = { root = \"../site/./www/\" }\n"
      "[[route]]\nstatic = { root = \"/srv/www\" }\n";
  Result<SiteConfig> site = loadSiteConfigString(text, "/etc/scalws/sites/a.toml");
  ASSERT_TRUE(site.ok()) << site.status().message();
  EXPECT_EQ(std::get<StaticAction>(site->routes[0].action).root, "/etc/scalws/sites/www");
  EXPECT_EQ(std::get<StaticAction>(site->routes[1].action).root, "/etc/scalws/site/www/");
  EXPECT_EQ(std::get<StaticAction>(site->routes[2].action).root, "/srv/www");
  EXPECT_EQ(testing::errorsOf("[[listen]]\naddress = \"127.0.0.1:1\"\n[[route]]\n"
                              "static = { root = \"\" }\n"),
            "t.toml:4:19: route.static.root: must not be empty");
}

class ConfigFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/scalws-config-test-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  std::string write(const std::string& name, const std::string& text) {
    std::string path = dir_ + "/" + name;
    std::ofstream(path) << text;
    return path;
  }
  std::string dir_;
};

TEST_F(ConfigFileTest, LoadsAFileAndNamesItInErrors) {
  std::string good = write("good.toml",
                           "[[listen]]\naddress = \"127.0.0.1:8080\"\n"
                           "tls = { cert = \"c.pem\", key = \"k.pem\" }\n");
  Result<SiteConfig> site = loadSiteConfigFile(good);
  ASSERT_TRUE(site.ok()) << site.status().message();
  EXPECT_EQ(site->source, good);
  EXPECT_EQ(site->listens[0].tls->cert, dir_ + "/c.pem");
  EXPECT_EQ(site->listens[0].where.toString(), good + ":1:1");

  std::string bad = write("bad.toml", "[server]\nworkers = \"two\"\n");
  Result<SiteConfig> refused = loadSiteConfigFile(bad);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(refused.status().message(),
            bad + ":1:1: at least one [[listen]] is required\n" + bad +
                ":2:11: server.workers: expected an integer, found a string");
}

TEST_F(ConfigFileTest, MissingFile) {
  Result<SiteConfig> site = loadSiteConfigFile(dir_ + "/missing.toml");
  ASSERT_FALSE(site.ok());
  EXPECT_EQ(site.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(site.status().message(),
            "cannot read config file \"" + dir_ + "/missing.toml\": No such file or directory");
}

TEST_F(ConfigFileTest, DirectoryIsNotAConfig) {
  Result<SiteConfig> site = loadSiteConfigFile(dir_);
  ASSERT_FALSE(site.ok());
  EXPECT_EQ(site.status().message(),
            "cannot read config file \"" + dir_ + "\": not a regular file");
}

TEST_F(ConfigFileTest, UnreadableFile) {
  if (geteuid() == 0) GTEST_SKIP() << "root reads files regardless of their mode";
  std::string path = write("secret.toml", "");
  ASSERT_EQ(chmod(path.c_str(), 0), 0);
  Result<SiteConfig> site = loadSiteConfigFile(path);
  ASSERT_FALSE(site.ok());
  EXPECT_EQ(site.status().code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(site.status().message(), "cannot read config file \"" + path + "\": Permission denied");
}

TEST(ConfigLoader, ExampleSiteLoads) {
  std::string path = std::string(SCALWS_SOURCE_DIR) + "/deploy/examples/site.toml";
  Result<SiteConfig> site = loadSiteConfigFile(path);
  ASSERT_TRUE(site.ok()) << site.status().message();
  ASSERT_EQ(site->listens.size(), 1u);
  EXPECT_EQ(site->listens[0].host, "127.0.0.1");
  EXPECT_EQ(site->listens[0].port, 8080);
  ASSERT_GE(site->routes.size(), 2u);
  EXPECT_EQ(site->routes[0].match.exact, "/health");
  const auto& last = std::get<RespondAction>(site->routes.back().action);
  EXPECT_EQ(last.body, "Hello from ScalWS\n");
}

}  // namespace
}  // namespace scalws::common::config
