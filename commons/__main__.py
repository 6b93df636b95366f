from commons.cli import run_console

run_console()
