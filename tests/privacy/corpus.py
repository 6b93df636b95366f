"""The privacy corpus: secrets and personal details planted where agent sessions really show them.

Each :class:`Format` is one kind of secret with its planted value, the placeholder it must become
and three texts: a tool's error output (what a failing command printed), a person's correction
(what someone typed to the agent) and an agent's statement (what the agent said it did). The
correction and statement are built from the format's ``snippet`` (the secret in the syntax it is
usually written in) through a few phrasings; the error outputs are written out one by one.

All values are made up for this corpus: right shape, random content, never a real credential.
``BENIGN`` holds ordinary technical text that the scrubber must leave exactly as it is.

Used by tests/test_scrub_corpus.py and tests/benchmarks/bench_scrub.py.
"""

from __future__ import annotations

from dataclasses import dataclass

from commons.core.policy.scrubber import Kind


@dataclass(frozen=True)
class Format:
    name: str
    kind: Kind
    secret: str  # the planted value: no 8 characters of it may survive scrubbing
    snippet: str  # how it is written in a file, a command or a header; "{s}" is the secret
    error: str  # a tool's output that shows it; "{s}" is the secret


@dataclass(frozen=True)
class Case:
    format: Format
    context: str  # "error" | "correction" | "statement"
    text: str


CONTEXTS = ("error", "correction", "statement")

# How people and agents put a secret into words; the format's snippet fills the gap.
_CORRECTIONS = (
    "no, that's the old one. use {snippet} instead, the other was revoked last week",
    "wrong credentials again. The right line is {snippet} — copy it exactly",
    "No no. put {snippet} in the config and rerun, don't regenerate anything",
)
_STATEMENTS = (
    "I set {snippet} in the environment and reran the failing step; it passed.",
    "The deploy failed until I replaced the value with {snippet}, then all 14 tests passed.",
    "I found {snippet} in the CI settings and used it for the retry.",
)

FORMATS: tuple[Format, ...] = (
    Format("github-classic", Kind.GITHUB_TOKEN, "ghp_NqVwYS81VP7Hb1DX8pPd5khxE3pyIgKpaUnA",
           "GITHUB_TOKEN={s}",
           "$ git push origin main\nremote: Invalid username or password.\n"
           "fatal: Authentication failed for 'https://{s}@github.com/acme/api.git/'"),
    Format("github-fine-grained", Kind.GITHUB_TOKEN,
           "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",
           "the token {s}",
           "$ gh auth login --with-token <<< {s}\nerror validating token: HTTP 401: Bad credentials "
           "(https://api.github.com/)\nTry authenticating with:  gh auth login"),
    Format("github-app", Kind.GITHUB_TOKEN, "ghs_Hb1DX8pPd5khxE3pyIgKpaUnANqVwYS81VP7",
           "git remote set-url origin https://x-access-token:{s}@github.com/acme/web.git",
           "Run actions/checkout@v4\n  token: {s}\nError: fatal: could not read Username for "
           "'https://github.com': terminal prompts disabled"),
    Format("gitlab", Kind.GITLAB_TOKEN, "glpat-Vw2zbJYAxyL1aCcTlN99",
           "CI_JOB_TOKEN={s}",
           "$ curl --header \"PRIVATE-TOKEN: {s}\" https://gitlab.com/api/v4/projects\n"
           "{{\"message\":\"401 Unauthorized\"}}"),
    Format("aws-access-key-id", Kind.AWS_KEY, "AKIAMHP3W6W7Q3GXSC1F",
           "AWS_ACCESS_KEY_ID={s}",
           "$ aws s3 ls s3://acme-builds\nAn error occurred (InvalidAccessKeyId) when calling the "
           "ListObjectsV2 operation: The AWS Access Key Id you provided does not exist in our "
           "records. (key: {s})"),
    Format("aws-secret-access-key", Kind.AWS_SECRET, "ARUsRJlNONwktN9ugkZeESG61she+QAqq0nv3Vth",
           "aws_secret_access_key = {s}",
           "$ cat ~/.aws/credentials\n[default]\naws_access_key_id = AKIAMHP3W6W7Q3GXSC1F\n"
           "aws_secret_access_key = {s}\n$ aws sts get-caller-identity\nAn error occurred "
           "(SignatureDoesNotMatch) when calling the GetCallerIdentity operation"),
    Format("gcp-api-key", Kind.GCP_KEY, "AIza1Ls6v6-O9JL8ZsoWw_Rxl-IUiTeNUJ-HLRw",
           "GOOGLE_MAPS_KEY={s}",
           "requests.exceptions.HTTPError: 403 Client Error: Forbidden for url: "
           "https://maps.googleapis.com/maps/api/geocode/json?address=x&key={s}"),
    Format("gcp-service-account", Kind.PRIVATE_KEY,
           "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7cX2vQk9Lz3Yp",
           '"private_key": "-----BEGIN PRIVATE KEY-----\\n{s}\\n-----END PRIVATE KEY-----\\n"',
           "$ cat sa.json\n{{\n  \"type\": \"service_account\",\n  \"project_id\": \"acme-prod\",\n"
           "  \"private_key_id\": \"4f1c\",\n  \"private_key\": \"-----BEGIN PRIVATE KEY-----\\n{s}"
           "\\n-----END PRIVATE KEY-----\\n\",\n  \"client_email\": \"ci@acme-prod.iam.gserviceaccount.com\"\n}}\n"
           "google.auth.exceptions.RefreshError: invalid_grant: Invalid JWT Signature."),
    Format("azure-account-key", Kind.AZURE_KEY,
           "b8GPJ7KTSJS0Sw5UQsvzU9Kk1v1MIdzu4xCxf8CvgroOx9ye17SWjAEVaSZJ0oVeMmLRLTq10V7suW9zrlSaWn==",
           "AZURE_STORAGE_CONNECTION_STRING=\"DefaultEndpointsProtocol=https;AccountName=acmelogs;"
           "AccountKey={s};EndpointSuffix=core.windows.net\"",
           "azure.core.exceptions.ClientAuthenticationError: Server failed to authenticate the "
           "request.\nconn_str='DefaultEndpointsProtocol=https;AccountName=acmelogs;AccountKey={s};"
           "EndpointSuffix=core.windows.net'"),
    Format("azure-sas", Kind.AZURE_KEY, "sv=2022-11-02&ss=b&srt=sco&sp=rwdlac&sig=Zk3q8Xv2",
           "Endpoint=sb://acme.servicebus.windows.net/;SharedAccessSignature={s}",
           "Microsoft.Azure.ServiceBus.UnauthorizedException: Put token failed. status-code: 401\n"
           "  connection: Endpoint=sb://acme.servicebus.windows.net/;SharedAccessSignature={s}"),
    Format("slack-token", Kind.SLACK_TOKEN, "xoxb-599825966637-4766299447460-u8tF7sjEbhQN9CpscYi0zaEI",
           "SLACK_BOT_TOKEN={s}",
           "slack_sdk.errors.SlackApiError: The request to the Slack API failed. (url: "
           "https://slack.com/api/chat.postMessage)\nThe server responded with: {{'ok': False, "
           "'error': 'invalid_auth'}} token={s}"),
    Format("slack-webhook", Kind.SLACK_WEBHOOK, "T9RP4CP5R/BJSS547HBIT/sITvNsUHbDwxRV0LicaqJDR6",
           "https://hooks.slack.com/services/{s}",
           "$ curl -X POST -d '{{\"text\":\"deploy done\"}}' https://hooks.slack.com/services/{s}\n"
           "invalid_payload"),
    Format("stripe-live", Kind.STRIPE_KEY, "sk_live_g4RImaBXZBMKST9OPE261yEz", "STRIPE_SECRET_KEY={s}",
           "stripe.error.AuthenticationError: Request req_8Hx2: Invalid API Key provided: {s}"),
    Format("stripe-restricted", Kind.STRIPE_KEY, "rk_live_R2Um5sD1Wet1aSXBLsPXE6tj",
           "stripe.api_key = \"{s}\"",
           "Traceback (most recent call last):\n  File \"billing/sync.py\", line 12, in <module>\n"
           "stripe.error.PermissionError: The provided key '{s}' does not have the required "
           "permissions for this endpoint"),
    Format("stripe-test", Kind.STRIPE_KEY, "sk_test_kESJ4FvIjBLIZdeUor0fYeQ8", "--api-key {s}",
           "$ stripe listen --api-key {s} --forward-to localhost:4242/webhook\n"
           "Error: Authorization failed, status=401"),
    Format("openai", Kind.OPENAI_KEY, "sk-proj-bvUBezSFdh1hoNP08hT5isT6CjlNlAZkeNncJgQyVerdKKhV",
           "OPENAI_API_KEY={s}",
           "openai.AuthenticationError: Error code: 401 - {{'error': {{'message': 'Incorrect API "
           "key provided: {s}. You can find your API key at https://platform.openai.com/account/api-keys.'}}}}"),
    Format("anthropic", Kind.ANTHROPIC_KEY,
           "sk-ant-api03-z4NiaBfuRMFFw8Px6diSsjKORGs68JJNoqeJpq1WsHiZp3xDVyliTbPvfKQcf3hGMDpy4DE9ugYHbIUyd2j88BRYoVhf6AA",
           "ANTHROPIC_API_KEY={s}",
           "$ curl https://api.anthropic.com/v1/messages -H \"x-api-key: {s}\"\n"
           "{{\"type\":\"error\",\"error\":{{\"type\":\"authentication_error\",\"message\":\"invalid x-api-key\"}}}}"),
    Format("huggingface", Kind.HUGGINGFACE_TOKEN, "hf_QF0niSNyw1psv7NTwYyyiU1wPsZOB92xHc", "HF_TOKEN={s}",
           "$ huggingface-cli login --token {s}\nhuggingface_hub.errors.HfHubHTTPError: 401 "
           "Client Error: Unauthorized for url: https://huggingface.co/api/whoami-v2"),
    Format("npm", Kind.NPM_TOKEN, "npm_LKnVlzegcclmmcF47EQWwaBEt47N6BuDDgmj",
           "//registry.npmjs.org/:_authToken={s}",
           "$ cat .npmrc\n//registry.npmjs.org/:_authToken={s}\n$ npm publish\n"
           "npm error code E401\nnpm error 401 Unauthorized - PUT https://registry.npmjs.org/@acme%2fui"),
    Format("pypi", Kind.PYPI_TOKEN,
           "pypi-AgEIcHlwaS5vcmcPkex3y34EjJqhr0kWsRpcE5cw7Wxu8dSbRDE28jhYQusDRpUkcmTbKoQfNz6",
           "TWINE_PASSWORD={s}",
           "$ twine upload -u __token__ -p {s} dist/*\nUploading acme_utils-0.4.1-py3-none-any.whl\n"
           "ERROR    HTTPError: 403 Forbidden from https://upload.pypi.org/legacy/\n"
           "         Invalid or non-existent authentication information."),
    Format("docker-hub", Kind.DOCKER_TOKEN, "dckr_pat_TxRtlDxseUTDkXplRn8cPMBUraD", "DOCKERHUB_TOKEN={s}",
           "$ echo {s} | docker login -u acmebot --password-stdin\n"
           "Error response from daemon: Get \"https://registry-1.docker.io/v2/\": unauthorized: "
           "incorrect username or password"),
    Format("docker-auth", Kind.DOCKER_AUTH, "ZGVwbG95Ym90OmRDWFJBa2NjSjExSEt3",
           '"auths": {{"registry.acme.io": {{"auth": "{s}"}}}}',
           "$ docker push registry.acme.io/api:1.4.2\nThe push refers to repository "
           "[registry.acme.io/api]\ndenied: requested access to the resource is denied\n"
           "$ cat ~/.docker/config.json\n{{\n\t\"auths\": {{\n\t\t\"registry.acme.io\": {{\n"
           "\t\t\t\"auth\": \"{s}\"\n\t\t}}\n\t}}\n}}"),
    Format("sendgrid", Kind.SENDGRID_KEY, "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",
           "SENDGRID_API_KEY={s}",
           "python_http_client.exceptions.UnauthorizedError: HTTP Error 401: Unauthorized\n"
           "  b'{{\"errors\":[{{\"message\":\"The provided authorization grant is invalid, expired, "
           "or revoked\",\"field\":null,\"help\":null}}]}}' (while sending with sg = "
           "SendGridAPIClient('{s}'))"),
    Format("twilio-api-key", Kind.TWILIO_KEY, "SK409e7349f28ca442f72d781f7169b32d", "TWILIO_API_KEY={s}",
           "twilio.base.exceptions.TwilioRestException: HTTP 401 error: Unable to create record: "
           "Authenticate (api key {s})"),
    Format("twilio-auth-token", Kind.PASSWORD, "d807d4b6ab0553854edd3aae7ed5e15f",
           "curl -u ACac0940e401d83c4a29548fa91200314b:{s} https://api.twilio.com/2010-04-01/Accounts.json",
           "$ curl -X POST https://api.twilio.com/2010-04-01/Accounts/ACac0940e401d83c4a29548fa91200314b/"
           "Messages.json -u ACac0940e401d83c4a29548fa91200314b:{s}\n{{\"code\": 20003, \"message\": "
           "\"Authenticate\", \"status\": 401}}"),
    Format("jwt", Kind.JWT,
           "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJ1c2VyLTQyIiwiZXhwIjoxNzAwMDAwMDAwfQ.Xq3v8pL2mN5rT9wY1zK4bC7dF0gH6jA2sE8uI3oP5lM",
           "session cookie {s}",
           "jwt.exceptions.ExpiredSignatureError: Signature has expired\n  token = '{s}'\n"
           "  File \"api/auth.py\", line 48, in verify"),
    Format("pem-rsa", Kind.PRIVATE_KEY, "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gunVTLw7onLRnrq0",
           "-----BEGIN RSA PRIVATE KEY-----\n{s}\nhRyG2kYpF1cN8wQ3\n-----END RSA PRIVATE KEY-----",
           "$ cat deploy/key.pem\n-----BEGIN RSA PRIVATE KEY-----\n{s}\n8yXQ7kP2mZ0aL5rT\n"
           "-----END RSA PRIVATE KEY-----\n$ ssh -i deploy/key.pem ops@203.0.113.9\n"
           "Load key \"deploy/key.pem\": invalid format"),
    Format("openssh-key", Kind.PRIVATE_KEY, "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW",
           "-----BEGIN OPENSSH PRIVATE KEY-----\n{s}\nQyNTUxOQAAACDq7\n-----END OPENSSH PRIVATE KEY-----",
           "$ cat id_ed25519\n-----BEGIN OPENSSH PRIVATE KEY-----\n{s}\nQyNTUxOQAAACBm3\n"
           "-----END OPENSSH PRIVATE KEY-----\n$ git fetch\ngit@github.com: Permission denied (publickey)."),
    Format("dsn-password", Kind.PASSWORD, "Tr0ub4dor&3xq",
           "DATABASE_URL=postgres://app:{s}@db.acme-prod.com:5432/orders",
           "sqlalchemy.exc.OperationalError: (psycopg2.OperationalError) connection to server at "
           "\"db.acme-prod.com\" failed: FATAL:  password authentication failed for user \"app\"\n"
           "(Background on this error at: https://sqlalche.me/e/20/e3q8) url=postgresql://app:{s}"
           "@db.acme-prod.com:5432/orders"),
    Format("env-password", Kind.PASSWORD, "Wint3rIsC0ming!", "DB_PASSWORD={s}",
           "$ cat .env\nDEBUG=false\nDB_HOST=db\nDB_PASSWORD={s}\n$ docker compose up\n"
           "db-1  | FATAL:  password authentication failed for user \"postgres\""),
    Format("yaml-secret", Kind.SECRET, "q9Lx2vR7kW4mZ8pT", "client_secret: {s}",
           "$ cat config/oauth.yml\noauth:\n  client_id: web-frontend\n  client_secret: {s}\n"
           "  redirect_uri: https://app.acme.io/callback\nError: invalid_client (401)"),
    Format("json-api-key", Kind.SECRET, "9f8e7d6c5b4a39281706f5e4d3c2b1a0", "{{\"api_key\": \"{s}\"}}",
           "$ cat settings.json\n{{\n  \"endpoint\": \"https://api.weather.example/v2\",\n"
           "  \"api_key\": \"{s}\",\n  \"units\": \"metric\"\n}}\nHTTP 403: key not authorised"),
    Format("cli-password-flag", Kind.PASSWORD, "s3cr3tPassw0rd", "--password {s}",
           "$ psql-migrate --host db --user admin --password {s} up\n"
           "error: pq: password authentication failed for user \"admin\""),
    Format("mysql-password", Kind.PASSWORD, "My$qlR00tPw", "mysql -u root -p{s}",
           "$ mysql -u root -p{s} -h 127.0.0.1 shop\nmysql: [Warning] Using a password on the command "
           "line interface can be insecure.\nERROR 1045 (28000): Access denied for user "
           "'root'@'localhost' (using password: YES)"),
    Format("password-in-prose", Kind.PASSWORD, "hunter2x!", "the password is {s}",
           "$ ./login.sh\nlogin failed: the password is {s} but the server expected a new one"),
    Format("bearer-header", Kind.TOKEN, "7Fq2LmX9vR4tZ1kW8pN3sD6h", "Authorization: Bearer {s}",
           "$ curl -H \"Authorization: Bearer {s}\" https://api.acme.io/v1/orders\n"
           "{{\"error\": \"invalid_token\", \"status\": 401}}"),
    Format("basic-header", Kind.TOKEN, "ZGVwbG95OnMzY3IzdC1wYXNz", "Authorization: Basic {s}",
           "> GET /artifactory/api/npm/ HTTP/1.1\n> Host: repo.acme.io\n> Authorization: Basic {s}\n"
           "< HTTP/1.1 401 Unauthorized"),
    Format("email", Kind.EMAIL, "margaret.oyelaran@acme-corp.com", "git config user.email {s}",
           "$ git commit -m 'fix'\nAuthor identity unknown\nfatal: unable to auto-detect email address "
           "(got '{s}' from the last commit)"),
    Format("phone-international", Kind.PHONE, "+44 20 7946 0958", "the on-call phone {s}",
           "twilio.base.exceptions.TwilioRestException: Unable to create record: The 'To' number "
           "{s} is not a valid phone number."),
    Format("phone-us", Kind.PHONE, "(415) 555-0199", "call me at {s}",
           "ValidationError: 1 validation error for Customer\nphone\n  value '{s}' does not match "
           "the pattern for E.164"),
    Format("ipv4-private", Kind.IP, "10.20.31.47", "DB_HOST={s}",
           "psycopg2.OperationalError: could not connect to server: Connection refused\n\tIs the "
           "server running on host \"{s}\" and accepting TCP/IP connections on port 5432?"),
    Format("ipv6-short", Kind.IP, "fe80::1c2b:3aff:fe4d:9e01", "the box at [{s}]",
           "$ ping6 {s}%en0\nPING6(56=40+8+8 bytes) {s}%en0 --> {s}%en0\nping6: sendmsg: No route to host"),
    Format("home-linux", Kind.HOME, "/home/okonkwo.adaeze", "{s}/src/api/.env",
           "Traceback (most recent call last):\n  File \"{s}/src/api/app.py\", line 7, in <module>\n"
           "    import fastapi\nModuleNotFoundError: No module named 'fastapi'"),
    Format("home-macos", Kind.HOME, "/Users/bartholomew", "{s}/Library/Caches/pip",
           "error: could not create '{s}/Library/Python/3.12/lib': Permission denied"),
    Format("home-windows", Kind.HOME, "C:\\Users\\Srinivasan", "{s}\\AppData\\Roaming\\npm",
           "npm ERR! code EPERM\nnpm ERR! path {s}\\AppData\\Roaming\\npm\\node_modules\nnpm ERR! "
           "Error: EPERM: operation not permitted, mkdir '{s}\\AppData\\Roaming\\npm'"),
)


def cases() -> tuple[Case, ...]:
    """Every format in every context: an error output, a correction and a statement."""
    out = []
    for i, fmt in enumerate(FORMATS):
        snippet = fmt.snippet.format(s=fmt.secret)
        out.append(Case(fmt, "error", fmt.error.format(s=fmt.secret)))
        out.append(Case(fmt, "correction", _CORRECTIONS[i % len(_CORRECTIONS)].format(snippet=snippet)))
        out.append(Case(fmt, "statement", _STATEMENTS[i % len(_STATEMENTS)].format(snippet=snippet)))
    return tuple(out)


# Ordinary text that makes a lesson useful; the scrubber must return each exactly as it is.
BENIGN: tuple[str, ...] = (
    "HEAD is now at 3f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39 fix: retry on 503",
    "error: pathspec 'a1b2c3d' did not match any file(s) known to git",
    "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08 pulled",
    "Digest: sha256:4bcd2b9a8f2c6e1d0a7b3c5e9f8d7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f",
    "request 123e4567-e89b-12d3-a456-426614174000 failed with 500",
    "pip install 'numpy==1.26.4' failed: requires Python >=3.9, found 3.8.10",
    "Version 1.2.3.4 of the driver is installed",
    "2024-03-18 10:15:30,482 WARNING worker-3 heartbeat missed",
    "[10:15:30] Finished 'build' after 2.4 s",
    "FileNotFoundError: [Errno 2] No such file or directory: '/tmp/pytest-of-runner/pytest-7/test_x0/out.json'",
    "wrote /tmp/tmp8x2k_q1z/build.log",
    "FAILED tests/test_ingest.py::test_long_transcript_with_many_tool_results_is_archived_in_order_without_gaps",
    "author: Fowler",
    "SyntaxError: unexpected token: IDENTIFIER at line 3",
    "UnauthorizedError: the request lacks valid authentication credentials",
    "The token expired, so the agent requested a new one from the login endpoint.",
    "The person said the password field must not be logged.",
    "KeyError: 'secret' in settings lookup",
    "jwt.exceptions.InvalidTokenError raised in verify()",
    "TokenizerError: unexpected end of input",
    "class PasswordResetView(FormView) has no attribute template_name",
    "max_tokens=1024 exceeded the model's context of 8192 tokens",
    "token = tokenizer.next_token()",
    "password_file=/run/secrets/db_password is mounted read-only",
    "npm ERR! peer dep missing: react@^18.2.0, required by react-dom@18.2.0",
    "Successfully installed requests-2.31.0 urllib3-2.2.1 certifi-2024.2.2",
    "uvicorn running on http://127.0.0.1:8000 (Press CTRL+C to quit)",
    "Listening on 0.0.0.0:5173 and [::1]:5173",
    "nameserver 8.8.8.8",
    "docker run -p 8080:80 nginx:1.25.3",
    "ImportError: cannot import name 'Base64Encoder' from 'nacl.encoding'",
    "ValueError: Invalid base64-encoded string: number of data characters (5) cannot be 1 more than a multiple of 4",
    "import { useQueryClientProviderContextValueSelector } from './hooks'",
    "git@github.com: Permission denied (publickey).",
    "error[E0599]: no method named `as_str` found for struct `std::path::PathBuf`",
    "test session starts (platform linux, python 3.12.1, pytest-8.1.1, pluggy-1.4.0)",
    "The agent used `uv pip install` and the build passed in 41.2 s",
    "Auth failed: bad credentials (HTTP 401) — see GITHUB_TOKEN docs",
    "export PATH=\"$HOME/.local/bin:$PATH\"",
    "api_key = os.environ[\"WEATHER_API_KEY\"]",
    "password: ${DB_PASSWORD}",
    "Ran 214 tests in 12.034s, OK (skipped=3)",
    "commit 9fceb02d0ae598e95dc970b74767f19372d61af8\nMerge: 1a2b3c4 5d6e7f8",
    "arr[::2] reverses nothing; arr[::-1] reverses",
    "mac address aa:bb:cc:dd:ee:ff not in the allow list",
    "threading.local() values are not shared between workers",
    "Access denied for user 'root'@'localhost' (using password: NO)",
    "The 3 failing tests are test_login, test_logout and test_refresh_token_rotation.",
)
