from iclr25.cli import main

main()
