from convmem._entry import main

main()
