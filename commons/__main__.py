from commons.launch import run_console

run_console()
