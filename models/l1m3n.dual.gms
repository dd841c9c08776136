$offlisting
$offdigit

EQUATIONS
	budget_0__hi
	budget_1__hi
	budget_2__hi
	budget_3__hi
	budget_4__hi
	budget_5__hi
	mu_bound_0__hi
	mu_bound_1__hi
	mu_bound_2__hi
	mu_bound_3__hi
	mu_bound_4__hi
	mu_bound_5__hi
	mu_bound_6__hi
	mu_bound_7__hi
	mu_bound_8__hi
	mu_bound_9__hi
	nu_bound_0__hi
	nu_bound_1__hi
	nu_bound_2__hi
	nu_bound_3__hi
	nu_bound_4__hi
	nu_bound_5__hi
	nu_bound_6__hi
	nu_bound_7__hi
	nu_bound_8__hi
	nu_bound_9__hi
	objective;

POSITIVE VARIABLES
	alpha_1_
	alpha_7_
	alpha_12_
	alpha_2_
	alpha_13_
	alpha_3_
	alpha_8_
	alpha_14_
	alpha_4_
	alpha_9_
	alpha_15_
	alpha_5_
	alpha_10_
	alpha_16_
	alpha_6_
	alpha_11_
	alpha_17_;

VARIABLES
	GAMS_OBJECTIVE
	;


budget_0__hi.. alpha_1_ + alpha_7_ + alpha_12_ =l= 1 ;
budget_1__hi.. alpha_2_ + alpha_13_ =l= 1 ;
budget_2__hi.. alpha_3_ + alpha_8_ + alpha_14_ =l= 1 ;
budget_3__hi.. alpha_4_ + alpha_9_ + alpha_15_ =l= 1 ;
budget_4__hi.. alpha_5_ + alpha_10_ + alpha_16_ =l= 1 ;
budget_5__hi.. alpha_6_ + alpha_11_ + alpha_17_ =l= 1 ;
mu_bound_0__hi.. (-0.34381173988453018)*alpha_1_ + (-1.2380837762647912)*alpha_2_ + (-1.6961041766054374)*alpha_3_ + 3.1637923753332533*alpha_4_ + 1.6636466755263661*alpha_5_ + 0.77498649138232167*alpha_6_ + 1.0425133694426776*alpha_7_ + (-0.651697767007658)*alpha_8_ + 2.7731244482713286*alpha_9_ + 2.83344858329923*alpha_10_ + 2.002392583645255*alpha_11_ + (-1.1675334453946622)*alpha_12_ + (-0.87437024835832666)*alpha_13_ + (-0.43703864450131713)*alpha_14_ + 0.39512206018200824*alpha_15_ + 1.184117966757189*alpha_16_ + 0.052028974259886507*alpha_17_ =l= 0.5 ;
mu_bound_1__hi.. 0.34381173988453018*alpha_1_ + 1.2380837762647912*alpha_2_ + 1.6961041766054374*alpha_3_ + (-3.1637923753332533)*alpha_4_ + (-1.6636466755263661)*alpha_5_ + (-0.77498649138232167)*alpha_6_ + (-1.0425133694426776)*alpha_7_ + 0.651697767007658*alpha_8_ + (-2.7731244482713286)*alpha_9_ + (-2.83344858329923)*alpha_10_ + (-2.002392583645255)*alpha_11_ + 1.1675334453946622*alpha_12_ + 0.87437024835832666*alpha_13_ + 0.43703864450131713*alpha_14_ + (-0.39512206018200824)*alpha_15_ + (-1.184117966757189)*alpha_16_ + (-0.052028974259886507)*alpha_17_ =l= 0.5 ;
mu_bound_2__hi.. (-1.6494197872190104)*alpha_1_ + (-0.331019065705217)*alpha_2_ + 0.820865383388351*alpha_3_ + 3.4039773570074865*alpha_4_ + 2.77585052652016*alpha_5_ + 3.629266734731345*alpha_6_ + (-0.12853466294403426)*alpha_7_ + (-1.048431100390633)*alpha_8_ + 2.3176387271089207*alpha_9_ + 1.036482649390026*alpha_10_ + 0.18851919251246557*alpha_11_ + (-0.27497417702191096)*alpha_12_ + 0.19228506017854199*alpha_13_ + (-0.69305839135071157)*alpha_14_ + 0.42986369482223*alpha_15_ + 0.6617025720390349*alpha_16_ + 0.68368619077653447*alpha_17_ =l= 0.5 ;
mu_bound_3__hi.. 1.6494197872190104*alpha_1_ + 0.331019065705217*alpha_2_ + (-0.820865383388351)*alpha_3_ + (-3.4039773570074865)*alpha_4_ + (-2.77585052652016)*alpha_5_ + (-3.629266734731345)*alpha_6_ + 0.12853466294403426*alpha_7_ + 1.048431100390633*alpha_8_ + (-2.3176387271089207)*alpha_9_ + (-1.036482649390026)*alpha_10_ + (-0.18851919251246557)*alpha_11_ + 0.27497417702191096*alpha_12_ + (-0.19228506017854199)*alpha_13_ + 0.69305839135071157*alpha_14_ + (-0.42986369482223)*alpha_15_ + (-0.6617025720390349)*alpha_16_ + (-0.68368619077653447)*alpha_17_ =l= 0.5 ;
mu_bound_4__hi.. (-1.2792041224184674)*alpha_1_ + (-0.48702779345953895)*alpha_2_ + (-0.4874615163203678)*alpha_3_ + 0.0009974977972676546*alpha_4_ + (-0.6795124831434591)*alpha_5_ + (-0.9006088705380388)*alpha_6_ + 1.3664634705496859*alpha_7_ + (-1.179508330684333)*alpha_8_ + 0.59331623758395358*alpha_9_ + (-0.18360175470130713)*alpha_10_ + (-0.6331940901922267)*alpha_11_ + (-1.9134002382647015)*alpha_12_ + 1.4443157663376163*alpha_13_ + (-1.8333369401026722)*alpha_14_ + 0.69604272396286848*alpha_15_ + 0.43643524714322124*alpha_16_ + 1.0039615758421696*alpha_17_ =l= 0.5 ;
mu_bound_5__hi.. 1.2792041224184674*alpha_1_ + 0.48702779345953895*alpha_2_ + 0.4874615163203678*alpha_3_ + (-0.0009974977972676546)*alpha_4_ + 0.6795124831434591*alpha_5_ + 0.9006088705380388*alpha_6_ + (-1.3664634705496859)*alpha_7_ + 1.179508330684333*alpha_8_ + (-0.59331623758395358)*alpha_9_ + 0.18360175470130713*alpha_10_ + 0.6331940901922267*alpha_11_ + 1.9134002382647015*alpha_12_ + (-1.4443157663376163)*alpha_13_ + 1.8333369401026722*alpha_14_ + (-0.69604272396286848)*alpha_15_ + (-0.43643524714322124)*alpha_16_ + (-1.0039615758421696)*alpha_17_ =l= 0.5 ;
mu_bound_6__hi.. 3*alpha_1_ + 3*alpha_2_ + 3*alpha_4_ + 2*alpha_5_ + 3*alpha_6_ + alpha_7_ + (-3)*alpha_8_ + 2*alpha_9_ + alpha_10_ + alpha_11_ + 3*alpha_12_ + 2*alpha_13_ + (-2)*alpha_14_ + alpha_15_ - alpha_16_ + alpha_17_ =l= 0.5 ;
mu_bound_7__hi.. alpha_3_ - alpha_5_ - alpha_7_ + 2*alpha_8_ - alpha_10_ - alpha_11_ - alpha_12_ - alpha_13_ + 2*alpha_14_ - alpha_15_ =l= 0.5 ;
mu_bound_8__hi.. -alpha_3_ + alpha_5_ + alpha_8_ - alpha_9_ + alpha_10_ + (-2)*alpha_12_ - alpha_13_ + alpha_16_ - alpha_17_ =l= 0.5 ;
mu_bound_9__hi.. (-3)*alpha_1_ + (-3)*alpha_2_ + (-3)*alpha_4_ + (-2)*alpha_5_ + (-3)*alpha_6_ - alpha_9_ - alpha_10_ =l= 0.5 ;
nu_bound_0__hi.. 0.34381173988453018*alpha_1_ + 1.2380837762647912*alpha_2_ + 1.6961041766054374*alpha_3_ + (-3.1637923753332533)*alpha_4_ + (-1.6636466755263661)*alpha_5_ + (-0.77498649138232167)*alpha_6_ + (-1.0425133694426776)*alpha_7_ + 0.651697767007658*alpha_8_ + (-2.7731244482713286)*alpha_9_ + (-2.83344858329923)*alpha_10_ + (-2.002392583645255)*alpha_11_ + 1.1675334453946622*alpha_12_ + 0.87437024835832666*alpha_13_ + 0.43703864450131713*alpha_14_ + (-0.39512206018200824)*alpha_15_ + (-1.184117966757189)*alpha_16_ + (-0.052028974259886507)*alpha_17_ =l= 0.5 ;
nu_bound_1__hi.. (-0.34381173988453018)*alpha_1_ + (-1.2380837762647912)*alpha_2_ + (-1.6961041766054374)*alpha_3_ + 3.1637923753332533*alpha_4_ + 1.6636466755263661*alpha_5_ + 0.77498649138232167*alpha_6_ + 1.0425133694426776*alpha_7_ + (-0.651697767007658)*alpha_8_ + 2.7731244482713286*alpha_9_ + 2.83344858329923*alpha_10_ + 2.002392583645255*alpha_11_ + (-1.1675334453946622)*alpha_12_ + (-0.87437024835832666)*alpha_13_ + (-0.43703864450131713)*alpha_14_ + 0.39512206018200824*alpha_15_ + 1.184117966757189*alpha_16_ + 0.052028974259886507*alpha_17_ =l= 0.5 ;
nu_bound_2__hi.. 1.6494197872190104*alpha_1_ + 0.331019065705217*alpha_2_ + (-0.820865383388351)*alpha_3_ + (-3.4039773570074865)*alpha_4_ + (-2.77585052652016)*alpha_5_ + (-3.629266734731345)*alpha_6_ + 0.12853466294403426*alpha_7_ + 1.048431100390633*alpha_8_ + (-2.3176387271089207)*alpha_9_ + (-1.036482649390026)*alpha_10_ + (-0.18851919251246557)*alpha_11_ + 0.27497417702191096*alpha_12_ + (-0.19228506017854199)*alpha_13_ + 0.69305839135071157*alpha_14_ + (-0.42986369482223)*alpha_15_ + (-0.6617025720390349)*alpha_16_ + (-0.68368619077653447)*alpha_17_ =l= 0.5 ;
nu_bound_3__hi.. (-1.6494197872190104)*alpha_1_ + (-0.331019065705217)*alpha_2_ + 0.820865383388351*alpha_3_ + 3.4039773570074865*alpha_4_ + 2.77585052652016*alpha_5_ + 3.629266734731345*alpha_6_ + (-0.12853466294403426)*alpha_7_ + (-1.048431100390633)*alpha_8_ + 2.3176387271089207*alpha_9_ + 1.036482649390026*alpha_10_ + 0.18851919251246557*alpha_11_ + (-0.27497417702191096)*alpha_12_ + 0.19228506017854199*alpha_13_ + (-0.69305839135071157)*alpha_14_ + 0.42986369482223*alpha_15_ + 0.6617025720390349*alpha_16_ + 0.68368619077653447*alpha_17_ =l= 0.5 ;
nu_bound_4__hi.. 1.2792041224184674*alpha_1_ + 0.48702779345953895*alpha_2_ + 0.4874615163203678*alpha_3_ + (-0.0009974977972676546)*alpha_4_ + 0.6795124831434591*alpha_5_ + 0.9006088705380388*alpha_6_ + (-1.3664634705496859)*alpha_7_ + 1.179508330684333*alpha_8_ + (-0.59331623758395358)*alpha_9_ + 0.18360175470130713*alpha_10_ + 0.6331940901922267*alpha_11_ + 1.9134002382647015*alpha_12_ + (-1.4443157663376163)*alpha_13_ + 1.8333369401026722*alpha_14_ + (-0.69604272396286848)*alpha_15_ + (-0.43643524714322124)*alpha_16_ + (-1.0039615758421696)*alpha_17_ =l= 0.5 ;
nu_bound_5__hi.. (-1.2792041224184674)*alpha_1_ + (-0.48702779345953895)*alpha_2_ + (-0.4874615163203678)*alpha_3_ + 0.0009974977972676546*alpha_4_ + (-0.6795124831434591)*alpha_5_ + (-0.9006088705380388)*alpha_6_ + 1.3664634705496859*alpha_7_ + (-1.179508330684333)*alpha_8_ + 0.59331623758395358*alpha_9_ + (-0.18360175470130713)*alpha_10_ + (-0.6331940901922267)*alpha_11_ + (-1.9134002382647015)*alpha_12_ + 1.4443157663376163*alpha_13_ + (-1.8333369401026722)*alpha_14_ + 0.69604272396286848*alpha_15_ + 0.43643524714322124*alpha_16_ + 1.0039615758421696*alpha_17_ =l= 0.5 ;
nu_bound_6__hi.. (-3)*alpha_1_ + (-3)*alpha_2_ + (-3)*alpha_4_ + (-2)*alpha_5_ + (-3)*alpha_6_ - alpha_7_ + 3*alpha_8_ + (-2)*alpha_9_ - alpha_10_ - alpha_11_ + (-3)*alpha_12_ + (-2)*alpha_13_ + 2*alpha_14_ - alpha_15_ + alpha_16_ - alpha_17_ =l= 0.5 ;
nu_bound_7__hi.. -alpha_3_ + alpha_5_ + alpha_7_ + (-2)*alpha_8_ + alpha_10_ + alpha_11_ + alpha_12_ + alpha_13_ + (-2)*alpha_14_ + alpha_15_ =l= 0.5 ;
nu_bound_8__hi.. alpha_3_ - alpha_5_ - alpha_8_ + alpha_9_ - alpha_10_ + 2*alpha_12_ + alpha_13_ - alpha_16_ + alpha_17_ =l= 0.5 ;
nu_bound_9__hi.. 3*alpha_1_ + 3*alpha_2_ + 3*alpha_4_ + 2*alpha_5_ + 3*alpha_6_ + alpha_9_ + alpha_10_ =l= 0.5 ;
objective.. GAMS_OBJECTIVE =e= (4*alpha_1_ + 4*alpha_2_ + 4*alpha_3_ + 4*alpha_4_ + 4*alpha_5_ + 4*alpha_6_ + alpha_7_ + 2*alpha_8_ + 2*alpha_9_ + 3*alpha_10_ + alpha_11_ + 2*alpha_12_ + 2*alpha_13_ + 3*alpha_14_ + alpha_15_ + alpha_16_ + alpha_17_) ;

alpha_1_.l = 0;
alpha_7_.l = 0;
alpha_12_.l = 0;
alpha_2_.l = 0;
alpha_13_.l = 0;
alpha_3_.l = 0;
alpha_8_.l = 0;
alpha_14_.l = 0;
alpha_4_.l = 0;
alpha_9_.l = 0;
alpha_15_.l = 0;
alpha_5_.l = 0;
alpha_10_.l = 0;
alpha_16_.l = 0;
alpha_6_.l = 0;
alpha_11_.l = 0;
alpha_17_.l = 0;

MODEL GAMS_MODEL /all/ ;
option solprint=off;
option limrow=0;
option limcol=0;
option solvelink=5;
SOLVE GAMS_MODEL USING lp maximizing GAMS_OBJECTIVE;

Scalars MODELSTAT 'model status', SOLVESTAT 'solve status';
MODELSTAT = GAMS_MODEL.modelstat;
SOLVESTAT = GAMS_MODEL.solvestat;

Scalar OBJEST 'best objective', OBJVAL 'objective value';
OBJEST = GAMS_MODEL.objest;
OBJVAL = GAMS_MODEL.objval;

Scalar NUMVAR 'number of variables';
NUMVAR = GAMS_MODEL.numvar

Scalar NUMEQU 'number of equations';
NUMEQU = GAMS_MODEL.numequ

Scalar NUMDVAR 'number of discrete variables';
NUMDVAR = GAMS_MODEL.numdvar

Scalar NUMNZ 'number of nonzeros';
NUMNZ = GAMS_MODEL.numnz

Scalar ETSOLVE 'time to execute solve statement';
ETSOLVE = GAMS_MODEL.etsolve

