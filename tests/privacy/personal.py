"""The personal-details corpus: privacy beyond secrets, where agent sessions really show it.

Each :class:`Personal` case is one detail (a name in test output, a postal address, a national
id, bank details, a bare internal host name, a ``user@host`` identity, a password on a command
line) planted in one place a session shows it: ``error`` (a failing command's output), ``fix``
(the command that then worked, which a lesson quotes as its fix) or ``said`` (the person's words
to the agent). ``value`` is what must not survive: no 8 characters of it may reach a door.

Every value is made up for this corpus (right shape, valid check digits where the format has
them, no one's real data). Replayed through the real mining path by tests/test_privacy_personal.py
and `make privacy-report` (tests/benchmarks/bench_privacy_doors.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from commons.core.policy.rule import Kind


@dataclass(frozen=True)
class Personal:
    name: str
    kind: Kind  # the placeholder it must become
    value: str
    where: str  # "error" | "fix" | "said"
    command: str  # the command that failed ("error", "said") or that worked ("fix")
    text: str  # the output (error), the person's words (said); for "fix", the failing output before it


WHERE = ("error", "fix", "said")

CASES: tuple[Personal, ...] = (
    # --- personal names in test output and fixtures
    Personal("name-pytest-assert", Kind.NAME, "Priya Raghunathan", "error", "pytest tests/test_greeting.py",
             "E       AssertionError: assert 'Hello, Priya Raghunathan!' == 'Hello, Priya Raghunathan'\n"
             "FAILED tests/test_greeting.py::test_greeting - AssertionError"),
    Personal("name-fixture-json", Kind.NAME, "Margarethe Vollmer", "error", "pytest tests/test_invoice.py",
             'E   KeyError: \'vat_id\'\n  customer = {"name": "Margarethe Vollmer", "plan": "pro", "seats": 4}'),
    Personal("name-jest-expected", Kind.NAME, "Oluwaseun Adeyemi", "error", "npx jest src/welcome.test.ts",
             '  ● Welcome banner › greets the user\n    Expected: "Welcome back, Oluwaseun Adeyemi"\n'
             '    Received: "Welcome back, "'),
    Personal("name-git-config", Kind.NAME, "Tomasz Wieczorek", "fix", 'git config user.name "Tomasz Wieczorek"',
             "Author identity unknown\n*** Please tell me who you are.\nfatal: empty ident name not allowed"),
    Personal("name-said-customer", Kind.NAME, "Rafael Mendoza", "said", "python scripts/repro_refund.py",
             "no, the refund bug is for the customer Rafael Mendoza, not the test account. use his order"),
    Personal("name-git-log", Kind.NAME, "Ingrid Solberg", "error", "git log -1 --format=full",
             "commit 9f2c1e7\nAuthor: Ingrid Solberg <ingrid.solberg@nordlys-data.no>\n"
             "error: the commit message does not follow the convention"),
    Personal("name-said-fixture", Kind.NAME, "Siobhan Gallagher", "said", "pytest tests/test_export.py",
             "the fixture still has Siobhan Gallagher in it, that's a real client, swap it for a fake name"),
    Personal("name-django-user", Kind.NAME, "Kenji Watanabe", "error", "python manage.py test accounts",
             "FAIL: test_profile_page (accounts.tests.ProfileTests)\n"
             "AssertionError: 'Kenji Watanabe' not found in '<h1>Profile</h1>'"),
    Personal("name-rspec", Kind.NAME, "Amara Nwosu", "error", "bundle exec rspec spec/mailers",
             "Failure/Error: expect(mail.body).to include(\"Dear Amara Nwosu\")\n  expected to include \"Dear Amara Nwosu\""),
    # --- postal addresses
    Personal("address-us-geocode", Kind.ADDRESS, "1427 Maple Ridge Drive", "error", "pytest tests/test_geo.py",
             "E   GeocodeError: no match for '1427 Maple Ridge Drive, Columbus, OH 43215'"),
    Personal("address-uk-ship", Kind.ADDRESS, "22 Belvoir Road", "error", "pytest tests/test_shipping.py",
             "E   AssertionError: assert order.ship_to == 'Flat 3, 22 Belvoir Road, Bristol BS6 5DJ'"),
    Personal("address-de-curl", Kind.ADDRESS, "Lindenstraße 41", "fix",
             "curl -s 'https://geo.example.org/search?q=Lindenstraße 41, 10827 Berlin'",
             "curl: (3) URL using bad/illegal format or missing URL"),
    Personal("address-fr-said", Kind.ADDRESS, "88 rue des Lilas", "said", "npm run seed",
             "don't put my address in the seed data. 88 rue des Lilas, 69003 Lyon is where I live, use a fake one"),
    Personal("address-us-label", Kind.ADDRESS, "500 Alder Creek Blvd", "error", "node scripts/label.js",
             "Error: label rejected by carrier API: 500 Alder Creek Blvd, Suite 210, Portland, OR 97204"),
    Personal("address-es-said", Kind.ADDRESS, "Calle de Toledo 57", "said", "python manage.py loaddata clients",
             "the client address Calle de Toledo 57, 28005 Madrid must not be in the fixtures"),
    Personal("address-pt-error", Kind.ADDRESS, "Rua das Flores 112", "error", "pytest tests/test_cep.py",
             "E   ValueError: CEP inválido para 'Rua das Flores 112, 4050-262 Porto'"),
    # --- national ids
    Personal("ssn-error", Kind.NATIONAL_ID, "412-67-9053", "error", "pytest tests/test_applicants.py",
             "E   ValidationError: ssn '412-67-9053' already belongs to applicant 88"),
    Personal("ssn-said", Kind.NATIONAL_ID, "523-71-4408", "said", "pytest tests/test_tax.py",
             "my SSN 523-71-4408 is in the tax fixture from when I debugged it, get it out of there"),
    Personal("ssn-fix", Kind.NATIONAL_ID, "634-20-1187", "fix",
             "psql -d hr -c \"UPDATE employees SET ssn = '634-20-1187' WHERE id = 7\"",
             "ERROR:  null value in column \"ssn\" violates not-null constraint"),
    Personal("nino-uk", Kind.NATIONAL_ID, "JT 48 21 93 C", "error", "pytest tests/test_payroll.py",
             "E   PayrollError: NI number JT 48 21 93 C does not match the employee record"),
    Personal("dni-es", Kind.NATIONAL_ID, "48392071W", "error", "npm test -- dni",
             "  ✕ validates the DNI (12 ms)\n    expected validateDni('48392071W') to be true"),
    Personal("cpf-br", Kind.NATIONAL_ID, "710.384.526-35", "error", "pytest tests/test_cpf.py",
             "E   AssertionError: CPF 710.384.526-35 rejected by the checksum"),
    Personal("sin-ca-said", Kind.NATIONAL_ID, "293 847 158", "said", "python scripts/onboard.py",
             "my SIN is 293 847 158 and it's in the onboarding test data, remove it please"),
    # --- bank details
    Personal("iban-de-error", Kind.BANK, "DE18100700240829173654", "error", "pytest tests/test_sepa.py",
             "E   SepaError: mandate for IBAN DE18100700240829173654 was revoked"),
    Personal("iban-gb-spaced", Kind.BANK, "GB65 BARC 2045 7741 8293 75", "said", "python scripts/payout.py",
             "the payout goes to GB65 BARC 2045 7741 8293 75, that's my personal account, don't log it"),
    Personal("iban-fr-fix", Kind.BANK, "FR1420041010057391846201742", "fix",
             "stripe payouts create --destination-iban FR1420041010057391846201742 --amount 1200",
             "error: unknown destination"),
    Personal("iban-nl-error", Kind.BANK, "NL96RABO0318462907", "error", "node sync-payments.js",
             "PaymentError: account NL96RABO0318462907 is blocked for direct debit"),
    Personal("iban-es-said", Kind.BANK, "ES77 0049 1500 0573 1284 6091", "said", "pytest tests/test_invoice_pdf.py",
             "the invoice PDF test prints ES77 0049 1500 0573 1284 6091, which is the company's real account"),
    Personal("card-error", Kind.BANK, "4539 1488 0343 6467", "error", "pytest tests/test_checkout.py",
             "E   CardDeclined: card 4539 1488 0343 6467 declined (insufficient funds)"),
    Personal("card-said", Kind.BANK, "5527183409612733", "said", "npm run test:payments",
             "stop using 5527183409612733 in the tests, that's my actual card, use the processor's test card"),
    # --- bare internal host names
    Personal("host-internal-domain", Kind.HOST, "db01.internal.example.com", "error", "python manage.py migrate",
             'django.db.utils.OperationalError: could not translate host name "db01.internal.example.com" to address'),
    Personal("host-corp-ssh", Kind.HOST, "build-07.corp", "error", "ssh build-07.corp make release",
             "ssh: connect to host build-07.corp port 22: Connection refused"),
    Personal("host-internal-fix", Kind.HOST, "pg-replica-2.internal.acmepay.io", "fix",
             "psql -h pg-replica-2.internal.acmepay.io -U app -c 'select 1'",
             "psql: error: connection to server on socket failed: No such file or directory"),
    Personal("host-lan-said", Kind.HOST, "nas.lan", "said", "rsync -a dist/ backup:/srv/dist",
             "the backups go to nas.lan now, the old box is gone"),
    Personal("host-go-lookup", Kind.HOST, "api.prod.internal", "error", "go run ./cmd/sync",
             "Get \"https://api.prod.internal/v2/accounts\": dial tcp: lookup api.prod.internal: no such host"),
    Personal("host-corp-mirror", Kind.HOST, "artifactory.corp.globex.net", "said", "pip install -r requirements.txt",
             "no, use artifactory.corp.globex.net as the index, pypi is blocked from the office"),
    Personal("host-intranet", Kind.HOST, "wiki.intranet.hooli.de", "error", "curl -sf https://wiki.intranet.hooli.de/api",
             "curl: (6) Could not resolve host: wiki.intranet.hooli.de"),
    # --- user@host identities
    Personal("user-at-laptop-git", Kind.USER_AT_HOST, "kwame@kwame-ThinkPad-T14", "error", "git commit -m 'fix typo'",
             "*** Please tell me who you are.\nfatal: unable to auto-detect email address "
             "(got 'kwame@kwame-ThinkPad-T14.(none)')"),
    Personal("user-at-host-ssh", Kind.USER_AT_HOST, "tsato@devbox-07", "fix", "ssh tsato@devbox-07 'make -C ~/svc test'",
             "make: *** No rule to make target 'test'.  Stop."),
    Personal("user-at-host-said", Kind.USER_AT_HOST, "opsadmin@bastion", "said", "ssh db-primary",
             "log in as opsadmin@bastion first, the db is only reachable from there"),
    Personal("user-at-host-known-hosts", Kind.USER_AT_HOST, "rhea@nas", "error", "scp build.tgz rhea@nas:/backups/",
             "rhea@nas: Permission denied (publickey,password).\nlost connection"),
    Personal("user-at-host-prompt", Kind.USER_AT_HOST, "mbeki@buildbox", "error", "./deploy.sh",
             "mbeki@buildbox:~/deploy$ ./deploy.sh\n./deploy.sh: line 12: kubectl: command not found"),
    Personal("user-at-host-committer", Kind.USER_AT_HOST, "lena@lena-mbp", "error", "git log -1 --format=fuller",
             "Commit:     lena <lena@lena-mbp>\nerror: commit is not signed"),
    # --- passwords on command lines
    Personal("mysqladmin-p", Kind.PASSWORD, "Qv7rT2mK9x", "fix", "mysqladmin -uroot -pQv7rT2mK9x status",
             "mysqladmin: connect to server at 'localhost' failed\nerror: 'Access denied for user 'root'@'localhost''"),
    Personal("mysql-p-quoted", Kind.PASSWORD, "Tr0ub4dor&3x", "error", "mysql -u app -p'Tr0ub4dor&3x' appdb < seed.sql",
             "mysql: [Warning] Using a password on the command line interface can be insecure.\n"
             "ERROR 1146 (42S02) at line 3: Table 'appdb.users' doesn't exist"),
    Personal("redis-cli-a", Kind.PASSWORD, "Xk9pLmQ2vR7t", "fix", "redis-cli -h cache -a Xk9pLmQ2vR7t ping",
             "(error) NOAUTH Authentication required."),
    Personal("redis-cli-a-quoted", Kind.PASSWORD, "rd5-Wq81-zzT", "error", "redis-cli -a 'rd5-Wq81-zzT' INFO replication",
             "Warning: Using a password with '-a' or '-u' option on the command line interface may not be safe.\n"
             "Could not connect to Redis at 127.0.0.1:6379: Connection refused"),
    Personal("sudo-S-echo", Kind.PASSWORD, "Summer2026!q", "fix", "echo 'Summer2026!q' | sudo -S apt-get install -y jq",
             "sudo: a terminal is required to read the password; either use the -S option to read from standard input"),
    Personal("sudo-S-herestring", Kind.PASSWORD, "Pa55-w0rd-77", "error", "sudo -S systemctl restart nginx <<< 'Pa55-w0rd-77'",
             "Job for nginx.service failed because the control process exited with error code."),
    Personal("mongosh-password", Kind.PASSWORD, "M0ngo4Lyfe9", "fix",
             "mongosh --username admin --password M0ngo4Lyfe9 --authenticationDatabase admin",
             "MongoServerError: Authentication failed."),
    Personal("htpasswd-b", Kind.PASSWORD, "Adm1nPa55zz", "fix", "htpasswd -b -c .htpasswd admin Adm1nPa55zz",
             "htpasswd: cannot create file .htpasswd"),
    Personal("openssl-pass", Kind.PASSWORD, "CertPass7719", "error",
             "openssl pkcs12 -export -in cert.pem -inkey key.pem -out cert.p12 -passout pass:CertPass7719",
             "unable to load private key\n140234:error:0909006C:PEM routines:get_name:no start line"),
    Personal("smbclient-U", Kind.PASSWORD, "SmbPa55w0rdQ", "fix", "smbclient //files/share -U alice%SmbPa55w0rdQ -c ls",
             "session setup failed: NT_STATUS_LOGON_FAILURE"),
    Personal("ldapsearch-w", Kind.PASSWORD, "LdapS3cretVV", "error",
             "ldapsearch -x -H ldap://ldap -D cn=admin,dc=acme -w LdapS3cretVV -b dc=acme",
             "ldap_bind: Invalid credentials (49)"),
    Personal("zip-P", Kind.PASSWORD, "ZipPass1234q", "fix", "zip -P ZipPass1234q backup.zip db.sql",
             "zip error: Nothing to do! (backup.zip)"),
    Personal("said-password", Kind.PASSWORD, "kx8!Lm2#qz", "said", "ssh deploy",
             "the deploy box password is kx8!Lm2#qz, type it when ssh asks"),
    Personal("rabbitmqctl", Kind.PASSWORD, "Rabb1tPass9x", "fix", "rabbitmqctl add_user deploy Rabb1tPass9x",
             "Error: unable to perform an operation on node 'rabbit@localhost'"),
    # --- names and hosts in the person's words, again
    Personal("said-name-and-host", Kind.NAME, "Dmitri Volkov", "said", "make repro",
             "ask Dmitri Volkov for access first, then run the repro against his staging copy"),
    Personal("said-hostname-internal", Kind.HOST, "jenkins.internal.initech.com", "said", "make ci",
             "CI moved to jenkins.internal.initech.com last week, the old URL redirects"),
    Personal("error-name-in-csv", Kind.NAME, "Beatriz Carvalho", "error", "python scripts/import_csv.py",
             "ValueError: row 12: 'Beatriz Carvalho,beatriz.c@correio-exemplo.pt,+351 912 345 678' has 3 fields, "
             "expected 4"),
    Personal("error-address-in-log", Kind.ADDRESS, "742 Evergreen Ridge Lane", "error", "npm run e2e",
             "✗ checkout flow: address '742 Evergreen Ridge Lane, Springfield, IL 62704' not accepted"),
    Personal("fix-ssn-in-curl", Kind.NATIONAL_ID, "287-54-6120", "fix",
             "curl -X POST localhost:8000/applicants -d '{\"ssn\": \"287-54-6120\"}'",
             "curl: (7) Failed to connect to localhost port 8000"),
)


def by_kind() -> dict[Kind, list[Personal]]:
    out: dict[Kind, list[Personal]] = {}
    for case in CASES:
        out.setdefault(case.kind, []).append(case)
    return out
